import { useLocation } from 'preact-iso';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Connection, Connector } from '../api-types.js';
import { api, withQuery } from '../api.js';
import { valueOf } from '../connection/configValues.js';
import { useAction } from '../hooks.js';
import { initialValue } from './ConnectionField.js';

/** The create body from what was typed: lists split, numbers as numbers, empty optional fields left out. */
function bodyOf(connector: Connector, displayName: string, values: Record<string, string>) {
  const body: Record<string, unknown> = {
    connectorKey: connector.connectorKey,
    displayName: displayName.trim(),
  };
  for (const field of connector.configFields) {
    const value = valueOf(field, values[field.name] ?? '');
    if (value !== undefined) body[field.name] = value;
  }
  return body;
}

/**
 * The create-connection form for the `chosen` connector: what is typed, the request, and where the
 * focus goes after a refusal. Once created, the connections list opens its credentials dialog.
 */
export function useNewConnection(chosen: Connector | undefined) {
  const { route } = useLocation();
  const [displayName, setDisplayName] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  const form = useRef<HTMLFormElement>(null);

  // Choices start at the value their description names as the default (the http method: POST).
  useEffect(() => {
    if (!chosen) return;
    setValues((current) => {
      const next = { ...current };
      for (const field of chosen.configFields) {
        if (field.options && !field.options.includes(next[field.name] ?? '')) {
          next[field.name] = initialValue(field);
        }
      }
      return next;
    });
  }, [chosen]);

  const create = useAction(async (connector: Connector) =>
    api<Connection>('POST', '/api/v1/integrations/connections', {
      body: bodyOf(connector, displayName, values),
    }),
  );

  // After a refusal, focus goes to the first field it names, so the person lands on what to fix.
  useEffect(() => {
    if (!create.error) return;
    form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [create.error]);

  async function submit(event: Event) {
    event.preventDefault();
    if (!chosen) return;
    const connection = await create.run(chosen);
    if (connection) route(withQuery('/connections', { bind: connection.id }));
  }
  const choose = (key: string) => {
    create.setError(undefined);
    route(withQuery('/connections/new', { connector: key }), true);
  };
  const setValue = (name: string, value: string) => setValues((current) => ({ ...current, [name]: value }));
  return { displayName, setDisplayName, values, setValue, form, create, submit, choose };
}

export type NewConnection = ReturnType<typeof useNewConnection>;

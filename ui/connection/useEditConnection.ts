import { useEffect, useRef, useState } from 'preact/hooks';
import type { Connection, Connector } from '../api-types.js';
import { api } from '../api.js';
import { useAction } from '../hooks.js';
import { changesOf, hostOf, valuesOf } from './configValues.js';
import { connectionApi } from './paths.js';

/** Connectors whose bound credentials are sent to the receiver: a new host unbinds them (§15). */
const SENDS_CREDENTIALS = (connector: Connector): boolean =>
  connector.connectorKey !== 'webhook' && connector.configFields.some((f) => f.name === 'url');

/**
 * Editing a connection: its display name and its connector's config fields, starting from what it
 * has; only what changed is sent. `unbinds` says, as the URL is typed, that the credentials go.
 */
export function useEditConnection(
  connection: Connection,
  connector: Connector,
  onSaved: (saved: Connection | null) => void,
) {
  const [displayName, setDisplayName] = useState(connection.displayName);
  const [values, setValues] = useState<Record<string, string>>(() => valuesOf(connector, connection));
  const form = useRef<HTMLFormElement>(null);

  const save = useAction(async () => {
    const body = changesOf(connector, connection, displayName, values);
    if (Object.keys(body).length === 0) return onSaved(null);
    onSaved(await api<Connection>('PATCH', connectionApi(connection.id), { body }));
  });
  // After a refusal, focus goes to the first field it names.
  useEffect(() => {
    if (save.error) form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [save.error]);

  const before = hostOf(connection.config.url);
  const after = hostOf(values.url);
  const unbinds =
    connection.credentialsBound && SENDS_CREDENTIALS(connector) && before !== null && after !== null
      ? before !== after
      : false;
  const setValue = (name: string, value: string) => setValues((current) => ({ ...current, [name]: value }));
  return { displayName, setDisplayName, values, setValue, form, save, unbinds, before, after };
}

export type EditConnection = ReturnType<typeof useEditConnection>;

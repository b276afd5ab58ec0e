import { useState } from 'preact/hooks';
import type { Connection, Connector } from '../api-types.js';
import { api, ApiError } from '../api.js';
import { useAction } from '../hooks.js';

interface BindAnswer {
  connection: Connection;
  credentials: Record<string, string>;
}

/** Fields whose value is sent as typed: secrets are never trimmed. */
const TRIMMED = new Set(['headerName', 'webhookUrl']);

/** A refusal of the binding, in words (a revoked connection answers 409). */
function bindFailure(error: ApiError, name: string): ApiError {
  if (error.code !== 'conflict') return error;
  return new ApiError(
    error.status,
    error.code,
    `“${name}” is revoked, so it cannot take credentials any more. Create a new connection instead.`,
    error.fieldErrors,
    error.requestId,
  );
}

/**
 * The credentials form of a connection: what is typed, which generated fields the person fills in
 * themselves, and the secrets hubgate generated once they are bound.
 */
export function useCredentialsBinding(
  connection: Connection,
  fields: Connector['credentialFields'],
  onBound: (connection: Connection, generated: boolean) => void,
  onClose: () => void,
) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [own, setOwn] = useState<Record<string, boolean>>({});
  const [secrets, setSecrets] = useState<Record<string, string> | null>(null);

  const bind = useAction(async () => {
    const sent: Record<string, string> = {};
    for (const field of fields) {
      if (field.generated && !own[field.name]) continue;
      const value = values[field.name] ?? '';
      sent[field.name] = TRIMMED.has(field.name) ? value.trim() : value;
    }
    try {
      return await api<BindAnswer>('PUT', `/api/v1/integrations/connections/${connection.id}/credentials`, {
        body: sent,
      });
    } catch (error) {
      throw error instanceof ApiError ? bindFailure(error, connection.displayName) : error;
    }
  });

  async function submit(event: Event) {
    event.preventDefault();
    const answer = await bind.run();
    if (!answer) return;
    const generated = Object.keys(answer.credentials).length > 0;
    onBound(answer.connection, generated);
    if (generated) setSecrets(answer.credentials);
    else onClose();
  }
  const setValue = (name: string, value: string) => setValues((current) => ({ ...current, [name]: value }));
  const setOwnOf = (name: string, choice: boolean) => setOwn((current) => ({ ...current, [name]: choice }));
  return { values, setValue, own, setOwn: setOwnOf, secrets, bind, submit };
}

export type CredentialsBinding = ReturnType<typeof useCredentialsBinding>;

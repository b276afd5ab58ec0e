import type { ApiKey } from '../api-types.js';

/** The dialog open over the API keys page, if any. */
export type ApiKeyDialog =
  { kind: 'create' } | { kind: 'rotate'; key: ApiKey } | { kind: 'revoke'; key: ApiKey } | null;

import type { JSX } from 'preact';
import type { ApiKey, Page } from '../api-types.js';
import { withQuery } from '../api.js';
import type { Resource } from '../hooks.js';
import { EmptyState } from './EmptyState.js';
import { KeyRoleNotice } from './KeyRoleNotice.js';
import { KeyTable } from './KeyTable.js';
import { Loading } from './Loading.js';
import { ErrorNotice } from './Notice.js';
import { Pager } from './Pager.js';

/** The keys list: not allowed, failed, loading, empty with a way to start, or a page of keys. */
export function ApiKeysBody({
  allowed,
  keys,
  cursor,
  createButton,
  onRotate,
  onRevoke,
}: {
  allowed: boolean;
  keys: Resource<Page<ApiKey>>;
  cursor: string | null;
  createButton: JSX.Element;
  onRotate: (key: ApiKey) => void;
  onRevoke: (key: ApiKey) => void;
}) {
  if (!allowed || keys.error?.code === 'role_forbidden') return <KeyRoleNotice what="manage API keys" />;
  if (keys.error) return <ErrorNotice error={keys.error} title="The keys could not be loaded." />;
  if (!keys.data) return <Loading what="Loading the keys" />;
  if (keys.data.data.length === 0 && !cursor) {
    return (
      <EmptyState title="No API keys yet">
        <p>
          An API key lets a server-side script or job call hubgate’s automation API (connections, events, the
          hub overview) without a person signing in. It sends the key with every request as{' '}
          <code>Authorization: Bearer tnt_…</code> and can do only what its scopes allow.
        </p>
        {createButton}
      </EmptyState>
    );
  }
  return (
    <>
      <KeyTable keys={keys.data.data} onRotate={onRotate} onRevoke={onRevoke} />
      <Pager
        cursor={cursor}
        nextCursor={keys.data.nextCursor}
        hrefFor={(next) => withQuery('/api-keys', { cursor: next })}
        label="Pages of API keys"
      />
    </>
  );
}

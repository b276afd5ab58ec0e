import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, withQuery } from '../api.js';
import type { ApiKey, Page } from '../api-types.js';
import { EmptyState } from '../components/EmptyState.js';
import { KeyCreateDialog } from '../components/KeyCreateDialog.js';
import { KeyRevokeDialog } from '../components/KeyRevokeDialog.js';
import { KeyRoleNotice } from '../components/KeyRoleNotice.js';
import { KeyRotateDialog } from '../components/KeyRotateDialog.js';
import { KeyTable } from '../components/KeyTable.js';
import { Loading } from '../components/Loading.js';
import { ErrorNotice, Notice } from '../components/Notice.js';
import { PageHeader } from '../components/PageHeader.js';
import { Pager } from '../components/Pager.js';
import { useResource } from '../hooks.js';
import { canManageKeys, session } from '../session.js';

type Open = { kind: 'create' } | { kind: 'rotate'; key: ApiKey } | { kind: 'revoke'; key: ApiKey } | null;

const DESCRIPTION = 'Keys let your servers and scripts call hubgate’s automation API without a person.';

/** The recommended handling of keys (the spec's list), kept in sight. */
function Handling() {
  return (
    <section class="card" aria-labelledby="key-handling-title">
      <h2 id="key-handling-title">Handling keys safely</h2>
      <ul class="key-handling">
        <li>
          <strong>Least privilege.</strong> Give each key only the scopes its job needs, and one key to each
          system, so a leak reaches as little as possible.
        </li>
        <li>
          <strong>Expiry.</strong> Every key expires; choose the shortest lifetime that suits its job.
        </li>
        <li>
          <strong>Rotate regularly.</strong> Keep the old secret working for an hour to switch without an
          outage, or stop it at once if it may have leaked.
        </li>
        <li>
          <strong>Revoke</strong> keys that leaked or are no longer used.
        </li>
        <li>
          <strong>Store the secret in a secret manager.</strong> hubgate shows it once and keeps only a hash;
          never put it in code, tickets or chat.
        </li>
      </ul>
    </section>
  );
}

/** The tenant's automation keys (contract §4, §12): list, create, rotate, revoke. */
export function ApiKeysPage() {
  const { query } = useLocation();
  const cursor = query.cursor || null;
  const allowed = canManageKeys(session.value);
  const [open, setOpen] = useState<Open>(null);
  const [revoked, setRevoked] = useState<string | null>(null);
  const keys = useResource(
    (signal) =>
      allowed
        ? api<Page<ApiKey>>('GET', withQuery('/api/v1/company/api-keys', { cursor }), { signal })
        : Promise.resolve({ data: [], nextCursor: null }),
    `${allowed}:${cursor ?? ''}`,
  );

  // A dialog closed and the button that opened it may be gone, now or once the list reloads (a
  // revoked key has none): the page keeps the focus rather than the document's body.
  useEffect(() => {
    if (open === null && (!document.activeElement || document.activeElement === document.body))
      document.getElementById('main')?.focus();
  }, [open, keys.data]);

  const close = () => setOpen(null);
  const createButton = (
    <button
      type="button"
      class="button button-primary"
      onClick={() => {
        setRevoked(null);
        setOpen({ kind: 'create' });
      }}
    >
      Create key
    </button>
  );

  let body;
  if (!allowed || keys.error?.code === 'role_forbidden') body = <KeyRoleNotice what="manage API keys" />;
  else if (keys.error) body = <ErrorNotice error={keys.error} title="The keys could not be loaded." />;
  else if (!keys.data) body = <Loading what="Loading the keys" />;
  else if (keys.data.data.length === 0 && !cursor) {
    body = (
      <EmptyState title="No API keys yet">
        <p>
          An API key lets a server-side script or job call hubgate’s automation API (connections, events, the
          hub overview) without a person signing in. It sends the key with every request as{' '}
          <code>Authorization: Bearer tnt_…</code> and can do only what its scopes allow.
        </p>
        {createButton}
      </EmptyState>
    );
  } else {
    body = (
      <>
        <KeyTable
          keys={keys.data.data}
          onRotate={(key) => {
            setRevoked(null);
            setOpen({ kind: 'rotate', key });
          }}
          onRevoke={(key) => {
            setRevoked(null);
            setOpen({ kind: 'revoke', key });
          }}
        />
        <Pager
          cursor={cursor}
          nextCursor={keys.data.nextCursor}
          hrefFor={(next) => withQuery('/api-keys', { cursor: next })}
          label="Pages of API keys"
        />
      </>
    );
  }

  const listed = allowed && keys.data && (keys.data.data.length > 0 || cursor);
  return (
    <>
      <PageHeader title="API keys" description={DESCRIPTION} actions={listed ? createButton : undefined} />
      {revoked ? (
        <Notice tone="success">“{revoked}” is revoked. Requests with it are refused from now on.</Notice>
      ) : null}
      {body}
      {allowed ? <Handling /> : null}
      {open?.kind === 'create' ? <KeyCreateDialog onClose={close} onCreated={keys.reload} /> : null}
      {open?.kind === 'rotate' ? (
        <KeyRotateDialog apiKey={open.key} onClose={close} onRotated={keys.reload} />
      ) : null}
      {open?.kind === 'revoke' ? (
        <KeyRevokeDialog
          apiKey={open.key}
          onClose={close}
          onRevoked={() => {
            setRevoked(open.key.name);
            keys.reload();
          }}
        />
      ) : null}
    </>
  );
}

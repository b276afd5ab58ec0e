import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import type { ApiKey, Page } from '../api-types.js';
import { api, withQuery } from '../api.js';
import type { ApiKeyDialog } from '../components/apiKeyDialog.js';
import { ApiKeyDialogs } from '../components/ApiKeyDialogs.js';
import { ApiKeysBody } from '../components/ApiKeysBody.js';
import { KeyHandling } from '../components/KeyHandling.js';
import { Notice } from '../components/Notice.js';
import { PageHeader } from '../components/PageHeader.js';
import { useResource } from '../hooks.js';
import { canManageKeys, session } from '../session.js';

const DESCRIPTION = 'Keys let your servers and scripts call hubgate’s automation API without a person.';

/** The tenant's automation keys (contract §4, §12): list, create, rotate, revoke. */
export function ApiKeysPage() {
  const { query } = useLocation();
  const cursor = query.cursor || null;
  const allowed = canManageKeys(session.value);
  const [open, setOpen] = useState<ApiKeyDialog>(null);
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

  const openDialog = (next: ApiKeyDialog) => {
    setRevoked(null);
    setOpen(next);
  };
  const createButton = (
    <button type="button" class="button button-primary" onClick={() => openDialog({ kind: 'create' })}>
      Create key
    </button>
  );
  const listed = allowed && keys.data && (keys.data.data.length > 0 || cursor);
  return (
    <>
      <PageHeader title="API keys" description={DESCRIPTION} actions={listed ? createButton : undefined} />
      {revoked ? (
        <Notice tone="success">“{revoked}” is revoked. Requests with it are refused from now on.</Notice>
      ) : null}
      <ApiKeysBody
        allowed={allowed}
        keys={keys}
        cursor={cursor}
        createButton={createButton}
        onRotate={(key) => openDialog({ kind: 'rotate', key })}
        onRevoke={(key) => openDialog({ kind: 'revoke', key })}
      />
      {allowed ? <KeyHandling /> : null}
      <ApiKeyDialogs
        open={open}
        onChanged={keys.reload}
        onRevoked={setRevoked}
        onClose={() => setOpen(null)}
      />
    </>
  );
}

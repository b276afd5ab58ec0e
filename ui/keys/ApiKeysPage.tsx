// The API keys page (docs/api/keys.md, docs/operators/web-ui.md): the tenant's automation keys, what each may
// do and whether it works; create, rotate and revoke (after a confirmation); the MCP clients people
// approved with OAuth (McpClientsSection.tsx); how to handle keys, kept in sight.
import type { JSX } from 'preact';
import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, withQuery } from '../common/api.js';
import { ConfirmDialog } from '../common/Dialog.js';
import { formatPreciseDate, Time } from '../common/format.js';
import { useAction, useResource, type Resource } from '../common/hooks.js';
import { PageHeader } from '../common/Layout.js';
import {
  DoneNotice,
  EmptyState,
  ErrorNotice,
  Loading,
  RoleNotice,
  StatusBadge,
  useDoneNotice,
} from '../common/Notice.js';
import { Pager } from '../common/Pager.js';
import { routes, type ApiKey, type Page } from '../common/routes.js';
import { canManageKeys, session } from '../common/session.js';
import { KeyCreateDialog } from './KeyCreateDialog.js';
import { KeyRotateDialog } from './KeyRotateDialog.js';
import { McpClientsSection } from './McpClientsSection.js';
import { KeyScopeList } from './scopes.js';
import { rateLimitWords } from './shared.js';

/** The dialog open over the API keys page, if any. */
type ApiKeyDialog =
  { kind: 'create' } | { kind: 'rotate'; key: ApiKey } | { kind: 'revoke'; key: ApiKey } | null;

const SOON_MS = 7 * 24 * 60 * 60 * 1000;
const STATUS_WORDS: Record<ApiKey['status'], string> = {
  active: 'Active',
  expired: 'Expired',
  revoked: 'Revoked',
};

const day = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

/** A day ("Nov 24, 2026"), with the exact moment on hover. */
function Day({ at }: { at: string }) {
  return (
    <time dateTime={at} title={formatPreciseDate(at)}>
      {day.format(new Date(at))}
    </time>
  );
}

/** When an active key stops working (warning within a week); the day an expired one did. */
function Expiry({ apiKey }: { apiKey: ApiKey }) {
  if (apiKey.status === 'revoked') return <span class="muted">—</span>;
  if (apiKey.status === 'expired') {
    return (
      <span class="muted">
        <Day at={apiKey.expiresAt} />
      </span>
    );
  }
  const soon = new Date(apiKey.expiresAt).getTime() - Date.now() < SOON_MS;
  return (
    <span class={soon ? 'key-expiry key-expiry-soon' : 'key-expiry'}>
      <Time at={apiKey.expiresAt} />
      {soon ? <span class="badge badge-warn">Soon</span> : null}
    </span>
  );
}

/** One key: name and creation, prefix, scopes, status, expiry, last use, and rotate and revoke. */
function KeyRow({
  apiKey: key,
  onRotate,
  onRevoke,
}: {
  apiKey: ApiKey;
  onRotate: (key: ApiKey) => void;
  onRevoke: (key: ApiKey) => void;
}) {
  return (
    <tr>
      <th scope="row">
        <span class="key-name">{key.name}</span>
        <span class="key-created">
          Created <Time at={key.createdAt} />
        </span>
        {/* Only a key's own limit: every other key has the default, said in the create dialog. */}
        {key.rateLimitPerMinute ? (
          <span class="key-created">{rateLimitWords(key.rateLimitPerMinute)}</span>
        ) : null}
      </th>
      <td data-label="Prefix">
        <span class="mono key-prefix">{key.prefix}…</span>
      </td>
      <td data-label="Scopes">
        <KeyScopeList scopes={key.scopes} />
      </td>
      <td data-label="Status">
        <StatusBadge status={key.status} label={STATUS_WORDS[key.status]} />
        {key.status === 'revoked' && key.revokedAt ? (
          <span class="key-when">
            <Day at={key.revokedAt} />
          </span>
        ) : null}
      </td>
      <td class="key-nowrap" data-label="Expires">
        <Expiry apiKey={key} />
      </td>
      <td class="key-nowrap" data-label="Last used">
        {key.lastUsedAt ? <Time at={key.lastUsedAt} /> : <span class="muted">Never</span>}
      </td>
      <td class="actions">
        {key.status === 'active' ? (
          <>
            <button type="button" class="button button-small" onClick={() => onRotate(key)}>
              Rotate<span class="visually-hidden"> {key.name}</span>
            </button>
            <button
              type="button"
              class="button button-small button-danger-quiet"
              onClick={() => onRevoke(key)}
            >
              Revoke<span class="visually-hidden"> {key.name}</span>
            </button>
          </>
        ) : null}
      </td>
    </tr>
  );
}

/** The tenant's keys: what each may do, whether it works, and the actions on the working ones. */
function KeyTable({
  keys,
  onRotate,
  onRevoke,
}: {
  keys: ApiKey[];
  onRotate: (key: ApiKey) => void;
  onRevoke: (key: ApiKey) => void;
}) {
  return (
    // Focusable, so that a keyboard can scroll it where the screen is too narrow for every column.
    // On a phone each key is a card (`cards-on-phone`, styles.css): its actions stay in reach.
    <div class="table-wrap" tabIndex={0} role="region" aria-label="API keys">
      <table class="key-table cards-on-phone">
        <caption class="visually-hidden">API keys, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Scopes</th>
            <th scope="col">Status</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used</th>
            <th scope="col" class="actions">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <KeyRow key={key.id} apiKey={key} onRotate={onRotate} onRevoke={onRevoke} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The keys list: not allowed, failed, loading, empty with a way to start, or a page of keys. */
function ApiKeysBody({
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
  if (!allowed || keys.error?.code === 'role_forbidden') return <RoleNotice what="manage API keys" />;
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

/** The recommended handling of keys (the spec's list), kept in sight. */
function KeyHandling() {
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

/** Revoking a key (docs/api/keys.md), after a confirmation that names it. */
function KeyRevokeDialog({
  apiKey,
  onClose,
  onRevoked,
}: {
  apiKey: ApiKey;
  onClose: () => void;
  onRevoked: () => void;
}) {
  const revoke = useAction(async () => {
    await api(routes.keys.revoke, { params: { id: apiKey.id } });
    onRevoked();
    onClose();
  });
  return (
    <ConfirmDialog
      title={`Revoke “${apiKey.name}”?`}
      confirmLabel="Revoke key"
      danger
      busy={revoke.busy}
      onConfirm={() => void revoke.run()}
      onClose={onClose}
      error={<ErrorNotice error={revoke.error} />}
    >
      <p>
        Every request with this key (<span class="mono">{apiKey.prefix}…</span>) is refused from now on,
        within a second on every hubgate instance. Whatever still uses it stops working.
      </p>
      <p>This cannot be undone: to give access again, create a new key.</p>
    </ConfirmDialog>
  );
}

/** The dialog open over the API keys page, if any: create, rotate or revoke. */
function ApiKeyDialogs({
  open,
  onChanged,
  onRevoked,
  onClose,
}: {
  open: ApiKeyDialog;
  /** The list is out of date. */
  onChanged: () => void;
  onRevoked: (name: string) => void;
  onClose: () => void;
}) {
  return (
    <>
      {open?.kind === 'create' ? <KeyCreateDialog onClose={onClose} onCreated={onChanged} /> : null}
      {open?.kind === 'rotate' ? (
        <KeyRotateDialog apiKey={open.key} onClose={onClose} onRotated={onChanged} />
      ) : null}
      {open?.kind === 'revoke' ? (
        <KeyRevokeDialog
          apiKey={open.key}
          onClose={onClose}
          onRevoked={() => {
            onRevoked(open.key.name);
            onChanged();
          }}
        />
      ) : null}
    </>
  );
}

const DESCRIPTION = 'Keys let your servers and scripts call hubgate’s automation API without a person.';

/**
 * The tenant's automation keys (docs/api/keys.md, docs/operators/web-ui.md): list, create, rotate, revoke.
 */
export function ApiKeysPage() {
  const { query } = useLocation();
  const cursor = query.cursor || null;
  const allowed = canManageKeys(session.value);
  const [open, setOpen] = useState<ApiKeyDialog>(null);
  // “… is revoked” lasts while that page of the list is on screen.
  const { done, setDone, ref: doneNotice, dismiss } = useDoneNotice(cursor ?? '');
  const keys = useResource(
    (signal) =>
      allowed
        ? api(routes.keys.list, { query: { cursor }, signal })
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
    setDone(null);
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
      <DoneNotice done={done} noticeRef={doneNotice} onDismiss={dismiss} />
      <ApiKeysBody
        allowed={allowed}
        keys={keys}
        cursor={cursor}
        createButton={createButton}
        onRotate={(key) => openDialog({ kind: 'rotate', key })}
        onRevoke={(key) => openDialog({ kind: 'revoke', key })}
      />
      {allowed ? <McpClientsSection /> : null}
      {allowed ? <KeyHandling /> : null}
      <ApiKeyDialogs
        open={open}
        onChanged={keys.reload}
        onRevoked={(name) => setDone(`“${name}” is revoked. Requests with it are refused from now on.`)}
        onClose={() => setOpen(null)}
      />
    </>
  );
}

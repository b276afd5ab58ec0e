// The console's OAuth2 providers page (docs/api/oauth.md): the providers tenants can connect to, a page at a
// time; add, edit and delete one (refused in words while a connection uses it).
import type { JSX } from 'preact';
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { withQuery } from '../../common/api.js';
import { ConfirmDialog } from '../../common/Dialog.js';
import { Time } from '../../common/format.js';
import { useAction, useResource, type Resource } from '../../common/hooks.js';
import { PageHeader } from '../../common/Layout.js';
import { DoneNotice, EmptyState, ErrorNotice, Loading, useDoneNotice } from '../../common/Notice.js';
import { Pager } from '../../common/Pager.js';
import { routes, type OAuthProvider, type Page } from '../../common/routes.js';
import { platformApi } from '../key.js';
import { ProviderDialog } from './ProviderDialog.js';

type ProviderDialogState =
  | { kind: 'add' }
  | { kind: 'edit'; provider: OAuthProvider }
  | { kind: 'delete'; provider: OAuthProvider }
  | null;

const GRANT_SHORT = { authorization_code: 'Authorization code', client_credentials: 'Client credentials' };

/** The providers: name and connector, grant, API, scopes, updated, and edit or delete each. */
function ProviderTable({
  providers,
  onOpen,
}: {
  providers: OAuthProvider[];
  onOpen: (next: ProviderDialogState) => void;
}) {
  return (
    <div class="table-wrap">
      <table class="tenant-table cards-on-phone">
        <thead>
          <tr>
            <th scope="col">Provider</th>
            <th scope="col">Grant</th>
            <th scope="col">API</th>
            <th scope="col">Scopes</th>
            <th scope="col">Updated</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {providers.map((provider) => (
            <tr key={provider.key}>
              <th scope="row">
                <span class="tenant-name">
                  <bdi>{provider.name}</bdi>
                </span>
                <span class="tenant-id mono">{provider.connectorKey}</span>
              </th>
              <td data-label="Grant">{GRANT_SHORT[provider.grant]}</td>
              <td class="mono break" data-label="API">
                {provider.apiBaseUrl}
              </td>
              <td class={provider.scopes.length ? 'mono' : undefined} data-label="Scopes">
                {provider.scopes.length ? provider.scopes.join(' ') : <span class="muted">None</span>}
              </td>
              <td data-label="Updated">
                <Time at={provider.updatedAt} />
              </td>
              <td class="actions">
                <button
                  type="button"
                  class="button button-small"
                  onClick={() => onOpen({ kind: 'edit', provider })}
                >
                  Edit<span class="visually-hidden"> {provider.name}</span>
                </button>
                <button
                  type="button"
                  class="button button-small"
                  onClick={() => onOpen({ kind: 'delete', provider })}
                >
                  Delete<span class="visually-hidden"> {provider.name}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ProvidersBody({
  providers,
  cursor,
  addButton,
  onOpen,
}: {
  providers: Resource<Page<OAuthProvider>>;
  cursor: string | null;
  addButton: JSX.Element;
  onOpen: (next: ProviderDialogState) => void;
}) {
  if (providers.error && !providers.data)
    return <ErrorNotice error={providers.error} title="The providers could not be loaded." />;
  if (!providers.data) return <Loading what="Loading the providers" />;
  if (providers.data.data.length === 0 && !cursor) {
    return (
      <EmptyState title="No OAuth2 providers yet">
        <p>
          Add a provider (its URLs and hubgate’s client ID and secret there) and tenants can connect to its
          API without pasting a token.
        </p>
        {addButton}
      </EmptyState>
    );
  }
  return (
    <>
      <ProviderTable providers={providers.data.data} onOpen={onOpen} />
      <Pager
        cursor={cursor}
        nextCursor={providers.data.nextCursor}
        hrefFor={(next) => withQuery('/platform/oauth-providers', { cursor: next })}
        label="Pages of providers"
      />
    </>
  );
}

/** "Delete GitHub?": a provider a connection still uses is refused (409), said in words. */
function DeleteProviderDialog({
  provider,
  onClose,
  onDeleted,
}: {
  provider: OAuthProvider;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const remove = useAction(async () => {
    await platformApi(routes.platform.deleteOAuthProvider, { params: { key: provider.key } });
    onDeleted();
  });
  const error =
    remove.error?.status === 409
      ? remove.error.saying(
          `${provider.name} is still used by a connection. Tenants must revoke their ${provider.name} connections before it can be deleted.`,
        )
      : remove.error;
  return (
    <ConfirmDialog
      title={`Delete ${provider.name}?`}
      confirmLabel="Delete provider"
      danger
      busy={remove.busy}
      onConfirm={() => void remove.run()}
      onClose={onClose}
      error={<ErrorNotice error={error} title="The provider was not deleted." />}
    >
      <p>
        The connector <code>{provider.connectorKey}</code> leaves the catalog, and hubgate forgets its client
        secret. This cannot be undone.
      </p>
    </ConfirmDialog>
  );
}

/** OAuth2 providers (docs/api/oauth.md): list, add, edit, delete. */
export function ProvidersPage() {
  const { query } = useLocation();
  const cursor = query.cursor || null;
  const [open, setOpen] = useState<ProviderDialogState>(null);
  const { done: news, setDone: setNews, ref: newsRef, dismiss } = useDoneNotice(cursor ?? '');
  const providers = useResource(
    (signal) => platformApi(routes.platform.oauthProviders, { query: { cursor }, signal }),
    cursor ?? '',
  );
  const openDialog = (next: ProviderDialogState) => {
    setNews(null);
    setOpen(next);
  };
  const done = (message: string) => {
    setOpen(null);
    setNews(message);
    providers.reload();
  };
  const addButton = (
    <button type="button" class="button button-primary" onClick={() => openDialog({ kind: 'add' })}>
      Add provider
    </button>
  );
  const listed = providers.data && (providers.data.data.length > 0 || cursor);
  return (
    <>
      <PageHeader
        title="OAuth2 providers"
        description="The APIs tenants can connect to with OAuth2: each appears in their connector catalog as oauth2:<key>."
        actions={listed ? addButton : undefined}
      />
      <DoneNotice done={news} noticeRef={newsRef} onDismiss={dismiss} />
      <ProvidersBody providers={providers} cursor={cursor} addButton={addButton} onOpen={openDialog} />
      {open?.kind === 'add' || open?.kind === 'edit' ? (
        <ProviderDialog
          provider={open.kind === 'edit' ? open.provider : null}
          onClose={() => setOpen(null)}
          onSaved={(p) =>
            done(
              open.kind === 'edit'
                ? `Saved the changes to ${p.name}.`
                : `Added ${p.name}. Tenants now find it in their connector catalog as ${p.connectorKey}.`,
            )
          }
        />
      ) : null}
      {open?.kind === 'delete' ? (
        <DeleteProviderDialog
          provider={open.provider}
          onClose={() => setOpen(null)}
          onDeleted={() => done(`Deleted ${open.provider.name}.`)}
        />
      ) : null}
    </>
  );
}

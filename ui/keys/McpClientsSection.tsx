// The API keys page's MCP clients (docs/api/mcp.md): applications that signed in with OAuth and a
// person approved, with their scopes, who approved them and their last use, and Revoke (after a
// confirmation). The list follows what changes without this page: a client's last use, a grant
// approved or revoked elsewhere.
import { useState } from 'preact/hooks';
import { api, ApiError } from '../common/api.js';
import { ConfirmDialog } from '../common/Dialog.js';
import { Time } from '../common/format.js';
import { useAction, useFollow, useResource, type Resource } from '../common/hooks.js';
import { DoneNotice, ErrorNotice, Loading, useDoneNotice } from '../common/Notice.js';
import { routes, type McpGrant } from '../common/routes.js';
import { KeyScopeList } from './scopes.js';

type GrantList = Resource<{ data: McpGrant[] }>;

function GrantRow({ grant, onRevoke }: { grant: McpGrant; onRevoke: (grant: McpGrant) => void }) {
  return (
    <tr>
      <th scope="row">
        <span class="key-name">{grant.client.name}</span>
      </th>
      <td data-label="Scopes">
        <KeyScopeList scopes={grant.scopes} />
      </td>
      <td class="person-email" data-label="Approved by">
        {grant.approvedBy}
      </td>
      <td class="key-nowrap" data-label="Approved">
        <Time at={grant.createdAt} />
      </td>
      <td class="key-nowrap" data-label="Last used">
        {grant.lastUsedAt ? <Time at={grant.lastUsedAt} /> : <span class="muted">Never</span>}
      </td>
      <td class="actions">
        <button type="button" class="button button-small button-danger-quiet" onClick={() => onRevoke(grant)}>
          Revoke<span class="visually-hidden"> {grant.client.name}</span>
        </button>
      </td>
    </tr>
  );
}

/** The grants: failed, loading, none yet, or the table. */
function GrantsBody({ grants, onRevoke }: { grants: GrantList; onRevoke: (grant: McpGrant) => void }) {
  // Once listed, a failed follow-up read keeps the list on screen under its error.
  if (grants.error && !grants.data)
    return <ErrorNotice error={grants.error} title="The MCP clients could not be loaded." />;
  if (!grants.data) return <Loading what="Loading the MCP clients" />;
  if (grants.data.data.length === 0) {
    return (
      <p class="empty-inline">
        No MCP client has access. When someone approves an application (a desktop agent) that signs in with
        OAuth, it is listed here until its access is revoked.
      </p>
    );
  }
  return (
    <>
      {grants.error ? <ErrorNotice error={grants.error} title="The list may be out of date." /> : null}
      <div class="table-wrap" tabIndex={0} role="region" aria-label="MCP clients">
        <table class="key-table cards-on-phone">
          <caption class="visually-hidden">MCP clients, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Application</th>
              <th scope="col">Scopes</th>
              <th scope="col">Approved by</th>
              <th scope="col">Approved</th>
              <th scope="col">Last used</th>
              <th scope="col" class="actions">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {grants.data.data.map((grant) => (
              <GrantRow key={grant.id} grant={grant} onRevoke={onRevoke} />
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** Revoking a client's access (docs/api/mcp.md), after a confirmation that names it. */
function GrantRevokeDialog({
  grant,
  onClose,
  onRevoked,
}: {
  grant: McpGrant;
  onClose: () => void;
  onRevoked: () => void;
}) {
  const revoke = useAction(async () => {
    try {
      await api(routes.mcp.revokeGrant, { params: { id: grant.id } });
    } catch (error) {
      // Revoked meanwhile (another person, another tab): what the person wanted is done.
      if (!(error instanceof ApiError) || error.code !== 'not_found') throw error;
    }
    onRevoked();
    onClose();
  });
  return (
    <ConfirmDialog
      title={`Revoke “${grant.client.name}”?`}
      confirmLabel="Revoke access"
      danger
      busy={revoke.busy}
      onConfirm={() => void revoke.run()}
      onClose={onClose}
      error={<ErrorNotice error={revoke.error} />}
    >
      <p>
        Its tokens are refused from now on, within a second on every hubgate instance, and it cannot get new
        ones. To use hubgate again, the application has to ask again and someone has to approve it.
      </p>
    </ConfirmDialog>
  );
}

/** The MCP clients of the organization, on the API keys page of people who manage keys. */
export function McpClientsSection() {
  const grants = useResource((signal) => api(routes.mcp.grants, { signal }), 'mcp-grants');
  useFollow(grants);
  const [revoking, setRevoking] = useState<McpGrant | null>(null);
  const { done, setDone, ref, dismiss } = useDoneNotice();
  return (
    <section class="card mcp-clients" aria-labelledby="mcp-clients-title">
      <h2 id="mcp-clients-title">MCP clients</h2>
      <p class="page-description">
        Applications such as desktop agents that signed in with OAuth instead of a key, each approved by a
        person. They reach hubgate’s MCP server only, with the scopes approved.
      </p>
      <DoneNotice done={done} noticeRef={ref} onDismiss={dismiss} />
      <GrantsBody
        grants={grants}
        onRevoke={(grant) => {
          setDone(null);
          setRevoking(grant);
        }}
      />
      {revoking ? (
        <GrantRevokeDialog
          grant={revoking}
          onClose={() => setRevoking(null)}
          onRevoked={() => {
            setDone(`“${revoking.client.name}” is revoked. Its requests are refused from now on.`);
            grants.reload();
          }}
        />
      ) : null}
    </section>
  );
}

// The alerting channels page (docs/operators/alerting.md, docs/operators/web-ui.md): each channel with its
// settings (secrets only as set or not), its last delivery attempt, send test, enable or disable, edit,
// delete (naming the rules that use it).
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../common/api.js';
import { ConfirmDialog } from '../../common/Dialog.js';
import { Time } from '../../common/format.js';
import { useAction, useResource, type Resource } from '../../common/hooks.js';
import { PageHeader } from '../../common/Layout.js';
import { EmptyState, ErrorNotice, Loading, Notice, StatusBadge } from '../../common/Notice.js';
import {
  routes,
  type Channel,
  type ChannelAttempt,
  type Page,
  type RoutingDocument,
  type TestResult,
} from '../../common/routes.js';
import { platformApi } from '../key.js';
import { ChannelFormDialog } from './ChannelFormDialog.js';
import { KIND_FIELDS, KIND_NAMES } from './channels.js';

/** The dialog open over the channels page, if any. */
type ChannelDialog =
  { kind: 'create' } | { kind: 'edit'; channel: Channel } | { kind: 'delete'; channel: Channel } | null;

/**
 * A channel's actions, each named by the channel for a screen reader: test, enable or disable, edit, delete.
 */
function ChannelButtons({
  channel,
  testing,
  toggling,
  onTest,
  onToggle,
  onEdit,
  onDelete,
}: {
  channel: Channel;
  testing: boolean | undefined;
  toggling: boolean;
  onTest: (channel: Channel) => void;
  onToggle: (channel: Channel) => void;
  onEdit: (channel: Channel) => void;
  onDelete: (channel: Channel) => void;
}) {
  return (
    <div class="channel-buttons">
      <button
        type="button"
        class="button button-small"
        disabled={testing}
        aria-busy={testing}
        onClick={() => onTest(channel)}
      >
        Send test<span class="visually-hidden"> to {channel.name}</span>
      </button>
      <button
        type="button"
        class="button button-small"
        aria-busy={toggling}
        onClick={() => onToggle(channel)}
      >
        {channel.enabled ? 'Disable' : 'Enable'}
        <span class="visually-hidden"> {channel.name}</span>
      </button>
      <button type="button" class="button button-small" onClick={() => onEdit(channel)}>
        Edit<span class="visually-hidden"> {channel.name}</span>
      </button>
      <button type="button" class="button button-small button-danger-quiet" onClick={() => onDelete(channel)}>
        Delete<span class="visually-hidden"> {channel.name}</span>
      </button>
    </div>
  );
}

/** "Send test" on one channel: running, its answer, or why it could not be asked. */
type TestState = { busy: true } | { busy: false; result: TestResult } | { busy: false; error: ApiError };

/** An answer's status in words: HTTP for the web kinds, the SMTP reply for e-mail. */
function statusWords(channel: Channel, status: number | null): string {
  if (status === null) return 'no answer';
  return channel.kind === 'EMAIL' ? `SMTP ${status}` : `HTTP ${status}`;
}

function TestOutcome({ channel, state }: { channel: Channel; state: TestState | undefined }) {
  // The region is always there, so a screen reader announces what appears in it.
  let text = null;
  if (state?.busy) {
    text = (
      <span class="channel-test-busy">
        <span class="spinner" aria-hidden="true" />
        Sending a test notification…
      </span>
    );
  } else if (state && 'error' in state) {
    text = <span class="channel-test-bad">The test could not be sent: {state.error.message}</span>;
  } else if (state) {
    const { result } = state;
    text = result.ok ? (
      <span class="channel-test-ok">
        Test delivered: {channel.name} answered {statusWords(channel, result.responseStatus)}.
      </span>
    ) : (
      <span class="channel-test-bad">
        Test failed ({statusWords(channel, result.responseStatus)}): {result.error ?? 'no reason given'}.
      </span>
    );
  }
  return (
    <p class="channel-test" role="status" aria-label={`Test of ${channel.name}`}>
      {text}
    </p>
  );
}

function LastAttempt({ channel, attempt }: { channel: Channel; attempt: ChannelAttempt | null }) {
  if (attempt === null) return <span class="muted">Never sent</span>;
  return (
    <span class="channel-attempt">
      <StatusBadge status={attempt.ok ? 'delivered' : 'failed'} label={attempt.ok ? 'Delivered' : 'Failed'} />{' '}
      <Time at={attempt.at} />
      <span class="channel-attempt-detail">
        {attempt.test ? 'Test, ' : ''}
        {statusWords(channel, attempt.responseStatus)}
        {attempt.error ? `: ${attempt.error}` : ''}
      </span>
    </span>
  );
}

/** The fields that are not secret, shown as set; the secret ones only as "set" or "not set". */
function Settings({ channel }: { channel: Channel }) {
  return (
    <dl class="channel-settings">
      {KIND_FIELDS[channel.kind].map((spec) => {
        const value = channel.config[spec.name];
        let shown;
        if (spec.secret) {
          shown = channel.secretFields.includes(spec.name) ? (
            <span class="channel-secret-set">set</span>
          ) : (
            <span class="muted">not set</span>
          );
        } else if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) {
          shown = <span class="muted">{spec.type === 'method' ? 'POST' : '—'}</span>;
        } else {
          shown = <bdi class="mono">{Array.isArray(value) ? value.join(', ') : String(value)}</bdi>;
        }
        return (
          <div key={spec.name}>
            <dt>{spec.label}</dt>
            <dd>{shown}</dd>
          </div>
        );
      })}
      {channel.kind === 'WEBHOOK' ? (
        <div>
          <dt>Signing secret</dt>
          <dd>
            {channel.secretFields.includes('signingSecret') ? (
              <span class="channel-secret-set">set</span>
            ) : (
              <span class="muted">not set</span>
            )}
          </dd>
        </div>
      ) : null}
    </dl>
  );
}

/** One channel: name and kind, its settings, enabled or not, its last delivery, and the actions on it. */
function ChannelRow({
  channel,
  test,
  toggling,
  onTest,
  onToggle,
  onEdit,
  onDelete,
}: {
  channel: Channel;
  test: TestState | undefined;
  toggling: ReadonlySet<string>;
  onTest: (channel: Channel) => void;
  onToggle: (channel: Channel) => void;
  onEdit: (channel: Channel) => void;
  onDelete: (channel: Channel) => void;
}) {
  return (
    <tr>
      <th scope="row">
        <bdi class="channel-name">{channel.name}</bdi>
        <span class="channel-kind-label">{KIND_NAMES[channel.kind]}</span>
        <span class="channel-updated">
          Updated <Time at={channel.updatedAt} />
        </span>
      </th>
      <td data-label="Settings">
        <Settings channel={channel} />
      </td>
      <td data-label="Status">
        <StatusBadge
          status={channel.enabled ? 'active' : 'disabled'}
          label={channel.enabled ? 'Enabled' : 'Disabled'}
        />
      </td>
      <td data-label="Last delivery">
        <LastAttempt channel={channel} attempt={channel.lastAttempt} />
      </td>
      <td class="actions channel-actions">
        <ChannelButtons
          channel={channel}
          testing={test?.busy}
          toggling={toggling.has(channel.id)}
          onTest={onTest}
          onToggle={onToggle}
          onEdit={onEdit}
          onDelete={onDelete}
        />
        <TestOutcome channel={channel} state={test} />
      </td>
    </tr>
  );
}

/** The alerting channels, with what each sends to and the actions on it. */
function ChannelTable({
  channels,
  tests,
  toggling,
  onTest,
  onToggle,
  onEdit,
  onDelete,
}: {
  channels: Channel[];
  tests: ReadonlyMap<string, TestState>;
  toggling: ReadonlySet<string>;
  onTest: (channel: Channel) => void;
  onToggle: (channel: Channel) => void;
  onEdit: (channel: Channel) => void;
  onDelete: (channel: Channel) => void;
}) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="Alerting channels">
      <table class="channel-table cards-on-phone">
        <caption class="visually-hidden">Alerting channels, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Channel</th>
            <th scope="col">Settings</th>
            <th scope="col">Status</th>
            <th scope="col">Last delivery</th>
            <th scope="col" class="actions">
              Actions
            </th>
          </tr>
        </thead>
        <tbody>
          {channels.map((channel) => (
            <ChannelRow
              key={channel.id}
              channel={channel}
              test={tests.get(channel.id)}
              toggling={toggling}
              onTest={onTest}
              onToggle={onToggle}
              onEdit={onEdit}
              onDelete={onDelete}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The channels: failed, loading, none yet with a way to add one, or the table. */
function ChannelsBody({
  channels,
  createButton,
  tests,
  toggling,
  onTest,
  onToggle,
  onEdit,
  onDelete,
}: {
  channels: Resource<Channel[]>;
  createButton: JSX.Element;
  tests: ReadonlyMap<string, TestState>;
  toggling: ReadonlySet<string>;
  onTest: (channel: Channel) => void;
  onToggle: (channel: Channel) => void;
  onEdit: (channel: Channel) => void;
  onDelete: (channel: Channel) => void;
}) {
  if (channels.error && !channels.data) {
    return <ErrorNotice error={channels.error} title="The channels could not be loaded." />;
  }
  if (!channels.data) return <Loading what="Loading the channels" />;
  if (channels.data.length === 0) {
    return (
      <EmptyState title="No alerting channels yet">
        <p>
          A channel is where hubgate sends the alerts it raises (deliveries failing, a queue backing up, the
          database out of reach): an e-mail list, a webhook, Slack, Grafana annotations or any HTTP endpoint.
          The routing rules then choose which alerts go to which channel.
        </p>
        {createButton}
      </EmptyState>
    );
  }
  return (
    <ChannelTable
      channels={channels.data}
      tests={tests}
      toggling={toggling}
      onTest={onTest}
      onToggle={onToggle}
      onEdit={onEdit}
      onDelete={onDelete}
    />
  );
}

const asApiError = (reason: unknown): ApiError =>
  reason instanceof ApiError ? reason : new ApiError(0, 'unknown', String(reason));

/**
 * A channel's actions in the list: a test (its answer kept per channel) and enable/disable (one
 * at a time per channel). `reload` brings the list up to date; `say` tells what changed.
 */
function useChannelActions(reload: () => void, say: (news: string) => void) {
  const [tests, setTests] = useState<Map<string, TestState>>(() => new Map());
  const [toggling, setToggling] = useState<Set<string>>(() => new Set());
  const [toggleError, setToggleError] = useState<ApiError | undefined>(undefined);
  const setTest = (id: string, state: TestState) => setTests((previous) => new Map(previous).set(id, state));

  async function sendTest(channel: Channel) {
    setTest(channel.id, { busy: true });
    try {
      const result = await platformApi(routes.platform.testChannel, { params: { id: channel.id }, body: {} });
      setTest(channel.id, { busy: false, result });
      reload();
    } catch (reason) {
      setTest(channel.id, { busy: false, error: asApiError(reason) });
    }
  }

  async function toggle(channel: Channel) {
    if (toggling.has(channel.id)) return;
    setToggling((previous) => new Set(previous).add(channel.id));
    setToggleError(undefined);
    try {
      await platformApi(routes.platform.editChannel, {
        params: { id: channel.id },
        body: { enabled: !channel.enabled },
      });
      say(`“${channel.name}” is ${channel.enabled ? 'disabled: no alert is sent to it' : 'enabled'}.`);
      reload();
    } catch (reason) {
      setToggleError(asApiError(reason));
    } finally {
      setToggling((previous) => {
        const next = new Set(previous);
        next.delete(channel.id);
        return next;
      });
    }
  }
  return { tests, toggling, toggleError, sendTest, toggle };
}

/** Which parts of the routing document name the channel, in words ("the defaults", "rule “pager”"). */
function usersOf(doc: RoutingDocument, id: string): string[] {
  const users = doc.rules.filter((rule) => rule.channelIds.includes(id)).map((rule) => `rule “${rule.name}”`);
  if (doc.defaults.channelIds.includes(id)) users.unshift('the defaults');
  return users;
}

/**
 * Deleting a channel after a confirmation that names it. The API refuses (409) while the routing
 * rules use it without saying which; the dialog reads the rules and names them.
 */
function ChannelDeleteDialog({
  channel,
  onClose,
  onDeleted,
}: {
  channel: Channel;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const [users, setUsers] = useState<string[] | null>(null);
  const remove = useAction(async () => {
    setUsers(null);
    try {
      await platformApi(routes.platform.deleteChannel, { params: { id: channel.id } });
    } catch (error) {
      if (error instanceof Error && 'status' in error && error.status === 409) {
        const doc = await platformApi(routes.platform.rules).catch(() => null);
        setUsers(doc ? usersOf(doc, channel.id) : []);
      }
      throw error;
    }
    onDeleted();
    onClose();
  });
  const inUse = remove.error?.status === 409;
  return (
    <ConfirmDialog
      title={`Delete “${channel.name}”?`}
      confirmLabel="Delete channel"
      danger
      busy={remove.busy}
      onConfirm={() => void remove.run()}
      onClose={onClose}
      error={
        inUse ? (
          <div class="notice notice-error" role="alert">
            <strong>“{channel.name}” is still in use</strong>
            {users && users.length > 0 ? <> by {users.join(', ')}</> : null}. Take it out of the routing rules
            first (<a href="/platform/alerting/rules">edit the rules</a>), then delete it.
          </div>
        ) : (
          <ErrorNotice error={remove.error} title="The channel was not deleted." />
        )
      }
    >
      <p>
        Alerts will no longer be sent to <strong>“{channel.name}”</strong>. Its settings and secrets are
        deleted and cannot be recovered.
      </p>
    </ConfirmDialog>
  );
}

/** The dialog open over the channels page, if any: add, edit or delete a channel. */
function ChannelDialogs({
  open,
  onChanged,
  onNews,
  onClose,
}: {
  open: ChannelDialog;
  /** The list is out of date. */
  onChanged: () => void;
  /** What happened, for the page to say. */
  onNews: (news: string) => void;
  onClose: () => void;
}) {
  return (
    <>
      {open?.kind === 'create' ? (
        <ChannelFormDialog
          onClose={onClose}
          onSaved={(channel) => {
            onNews(`“${channel.name}” was added. Send it a test to check that it works.`);
            onChanged();
          }}
        />
      ) : null}
      {open?.kind === 'edit' ? (
        <ChannelFormDialog
          channel={open.channel}
          onClose={onClose}
          onSaved={(channel) => {
            onNews(`“${channel.name}” was saved.`);
            onChanged();
          }}
        />
      ) : null}
      {open?.kind === 'delete' ? (
        <ChannelDeleteDialog
          channel={open.channel}
          onClose={onClose}
          onDeleted={() => {
            onNews(`“${open.channel.name}” was deleted.`);
            onChanged();
          }}
        />
      ) : null}
    </>
  );
}

/** Every channel: a platform has a handful, so all pages are read at once. */
async function loadChannels(signal: AbortSignal): Promise<Channel[]> {
  const all: Channel[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<Channel> = await platformApi(routes.platform.channels, {
      query: { limit: 100, cursor },
      signal,
    });
    all.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

/**
 * The operator console's alerting channels (docs/operators/alerting.md, docs/operators/web-ui.md): where the
 * platform's alerts go. Each kind with its fields, secrets write-only, enable/disable, a test with the answer
 * shown, delete.
 */
export function ChannelsPage() {
  const channels = useResource(loadChannels, 'channels');
  const [open, setOpen] = useState<ChannelDialog>(null);
  const [news, setNews] = useState<string | null>(null);
  const actions = useChannelActions(channels.reload, setNews);

  useEffect(() => {
    if (open === null && (!document.activeElement || document.activeElement === document.body))
      document.getElementById('main')?.focus();
  }, [open, channels.data]);

  const openDialog = (next: ChannelDialog) => {
    setNews(null);
    setOpen(next);
  };
  const createButton = (
    <button type="button" class="button button-primary" onClick={() => openDialog({ kind: 'create' })}>
      Add channel
    </button>
  );
  return (
    <>
      <PageHeader
        title="Alerting channels"
        description={
          <>
            Where the platform’s alerts are sent. Which alerts go where is set in the{' '}
            <a href="/platform/alerting/rules">routing rules</a>. Secret settings are never shown again once
            saved: only whether they are set.
          </>
        }
        actions={channels.data && channels.data.length > 0 ? createButton : undefined}
      />
      {news ? <Notice tone="success">{news}</Notice> : null}
      <ErrorNotice error={actions.toggleError} title="The channel was not changed." />
      {channels.error && channels.data ? (
        <ErrorNotice error={channels.error} title="The list could not be refreshed." />
      ) : null}
      <ChannelsBody
        channels={channels}
        createButton={createButton}
        tests={actions.tests}
        toggling={actions.toggling}
        onTest={(channel) => void actions.sendTest(channel)}
        onToggle={(channel) => void actions.toggle(channel)}
        onEdit={(channel) => openDialog({ kind: 'edit', channel })}
        onDelete={(channel) => openDialog({ kind: 'delete', channel })}
      />
      <ChannelDialogs
        open={open}
        onChanged={channels.reload}
        onNews={setNews}
        onClose={() => setOpen(null)}
      />
    </>
  );
}

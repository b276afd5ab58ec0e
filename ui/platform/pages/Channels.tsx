import { useEffect, useState } from 'preact/hooks';
import { ApiError, withQuery } from '../../api.js';
import type { Page } from '../../api-types.js';
import { EmptyState } from '../../components/EmptyState.js';
import { Loading } from '../../components/Loading.js';
import { ErrorNotice, Notice } from '../../components/Notice.js';
import { PageHeader } from '../../components/PageHeader.js';
import { useResource } from '../../hooks.js';
import { ChannelDeleteDialog } from '../components/ChannelDeleteDialog.js';
import { ChannelFormDialog } from '../components/ChannelFormDialog.js';
import { type Channel, channelPath, CHANNELS_PATH, type TestResult } from '../components/ChannelKinds.js';
import { ChannelTable, type TestState } from '../components/ChannelTable.js';
import { platformApi } from '../key.js';

type Open =
  { kind: 'create' } | { kind: 'edit'; channel: Channel } | { kind: 'delete'; channel: Channel } | null;

/** Every channel: a platform has a handful, so all pages are read at once. */
async function loadChannels(signal: AbortSignal): Promise<Channel[]> {
  const all: Channel[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<Channel> = await platformApi<Page<Channel>>(
      'GET',
      withQuery(CHANNELS_PATH, { limit: 100, cursor }),
      { signal },
    );
    all.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

const asApiError = (reason: unknown): ApiError =>
  reason instanceof ApiError ? reason : new ApiError(0, 'unknown', String(reason));

/**
 * The operator console's alerting channels (contract §9, §12): where the platform's alerts go. Each
 * kind with its fields, secrets write-only, enable/disable, a test with the answer shown, delete.
 */
export function ChannelsPage() {
  const channels = useResource(loadChannels, 'channels');
  const [open, setOpen] = useState<Open>(null);
  const [news, setNews] = useState<string | null>(null);
  const [tests, setTests] = useState<Map<string, TestState>>(() => new Map());
  const [toggling, setToggling] = useState<Set<string>>(() => new Set());
  const [toggleError, setToggleError] = useState<ApiError | undefined>(undefined);

  useEffect(() => {
    if (open === null && (!document.activeElement || document.activeElement === document.body))
      document.getElementById('main')?.focus();
  }, [open, channels.data]);

  const setTest = (id: string, state: TestState) => setTests((previous) => new Map(previous).set(id, state));

  async function sendTest(channel: Channel) {
    setTest(channel.id, { busy: true });
    try {
      const result = await platformApi<TestResult>('POST', `${channelPath(channel.id)}/test`, { body: {} });
      setTest(channel.id, { busy: false, result });
      channels.reload();
    } catch (reason) {
      setTest(channel.id, { busy: false, error: asApiError(reason) });
    }
  }

  async function toggle(channel: Channel) {
    if (toggling.has(channel.id)) return;
    setToggling((previous) => new Set(previous).add(channel.id));
    setToggleError(undefined);
    try {
      await platformApi<Channel>('PATCH', channelPath(channel.id), { body: { enabled: !channel.enabled } });
      setNews(`“${channel.name}” is ${channel.enabled ? 'disabled: no alert is sent to it' : 'enabled'}.`);
      channels.reload();
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

  const createButton = (
    <button
      type="button"
      class="button button-primary"
      onClick={() => {
        setNews(null);
        setOpen({ kind: 'create' });
      }}
    >
      Add channel
    </button>
  );

  let body;
  if (channels.error && !channels.data) {
    body = <ErrorNotice error={channels.error} title="The channels could not be loaded." />;
  } else if (!channels.data) {
    body = <Loading what="Loading the channels" />;
  } else if (channels.data.length === 0) {
    body = (
      <EmptyState title="No alerting channels yet">
        <p>
          A channel is where hubgate sends the alerts it raises (deliveries failing, a queue backing up, the
          database out of reach): an e-mail list, a webhook, Slack, Grafana annotations or any HTTP endpoint.
          The routing rules then choose which alerts go to which channel.
        </p>
        {createButton}
      </EmptyState>
    );
  } else {
    body = (
      <ChannelTable
        channels={channels.data}
        tests={tests}
        toggling={toggling}
        onTest={(channel) => void sendTest(channel)}
        onToggle={(channel) => void toggle(channel)}
        onEdit={(channel) => {
          setNews(null);
          setOpen({ kind: 'edit', channel });
        }}
        onDelete={(channel) => {
          setNews(null);
          setOpen({ kind: 'delete', channel });
        }}
      />
    );
  }

  const close = () => setOpen(null);
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
      <ErrorNotice error={toggleError} title="The channel was not changed." />
      {channels.error && channels.data ? (
        <ErrorNotice error={channels.error} title="The list could not be refreshed." />
      ) : null}
      {body}
      {open?.kind === 'create' ? (
        <ChannelFormDialog
          onClose={close}
          onSaved={(channel) => {
            setNews(`“${channel.name}” was added. Send it a test to check that it works.`);
            channels.reload();
          }}
        />
      ) : null}
      {open?.kind === 'edit' ? (
        <ChannelFormDialog
          channel={open.channel}
          onClose={close}
          onSaved={(channel) => {
            setNews(`“${channel.name}” was saved.`);
            channels.reload();
          }}
        />
      ) : null}
      {open?.kind === 'delete' ? (
        <ChannelDeleteDialog
          channel={open.channel}
          onClose={close}
          onDeleted={() => {
            setNews(`“${open.channel.name}” was deleted.`);
            channels.reload();
          }}
        />
      ) : null}
    </>
  );
}

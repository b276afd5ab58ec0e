import { useEffect, useState } from 'preact/hooks';
import type { Page } from '../../api-types.js';
import { withQuery } from '../../api.js';
import { ErrorNotice, Notice } from '../../components/Notice.js';
import { PageHeader } from '../../components/PageHeader.js';
import { useResource } from '../../hooks.js';
import type { ChannelDialog } from '../components/channelDialog.js';
import { ChannelDialogs } from '../components/ChannelDialogs.js';
import { CHANNELS_PATH, type Channel } from '../components/ChannelKinds.js';
import { ChannelsBody } from '../components/ChannelsBody.js';
import { useChannelActions } from '../components/useChannelActions.js';
import { platformApi } from '../key.js';

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

/**
 * The operator console's alerting channels (contract §9, §12): where the platform's alerts go. Each
 * kind with its fields, secrets write-only, enable/disable, a test with the answer shown, delete.
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

import { useState } from 'preact/hooks';
import type { Connection, RecoverAnswer, ResumeAnswer } from '../api-types.js';
import { plural } from '../format.js';
import type { Resource } from '../hooks.js';
import type { ConnectionPageDialog } from './ConnectionActions.js';
import { usePageNotice, type PageNoticeState } from './PageNotice.js';
import { connectionApi } from './paths.js';
import { useDeliveryCount } from './useDeliveryCount.js';
import { useTestEvent } from './useTestEvent.js';

type Opened = ConnectionPageDialog | 'bind';

const queuedAgain = (n: number, what: string, whats: string) =>
  `${plural(n, what, whats)} ${n === 1 ? 'is' : 'are'} queued again`;

const resumedText = (name: string, { replayed }: ResumeAnswer): string =>
  replayed > 0
    ? `Deliveries to ${name} resumed: ${queuedAgain(replayed, 'skipped delivery', 'skipped deliveries')}, oldest first.`
    : `Deliveries to ${name} resumed: new events are sent again.`;

const recoveredText = (queued: number): string =>
  queued > 0
    ? `${queuedAgain(queued, 'delivery', 'deliveries')} and sent from now on.`
    : 'Nothing was queued: no delivery in that range matches any more.';

/**
 * The connection page's state around its log: the dialog open, what just happened, the test event,
 * and the count of deliveries skipped while paused. Each change loads the connection and the log again.
 */
export function useConnectionPage(id: string, connection: Resource<Connection>, reloadLog: () => void) {
  const base = connectionApi(id);
  const [open, setOpenState] = useState<Opened>(null);
  const [round, setRound] = useState(0);
  const { notice, setNotice, ref } = usePageNotice();
  const test = useTestEvent(base, reloadLog);
  const current = connection.data;
  const paused = current?.status === 'paused';
  const skipped = useDeliveryCount(base, paused ? { status: 'skipped' } : null, round);

  const setOpen = (next: Opened) => {
    setNotice(null);
    // The resume dialog says how many were skipped: counted again as it opens.
    if (next === 'resume') setRound((n) => n + 1);
    setOpenState(next);
  };
  const changed = (
    text: string,
    tone: PageNoticeState['tone'] = 'success',
    action?: PageNoticeState['action'],
  ) => {
    setOpenState(null);
    connection.reload();
    reloadLog();
    setNotice({ tone, text, action });
  };
  const name = current ? `“${current.displayName}”` : 'the connection';
  const onPaused = () =>
    changed(`Deliveries to ${name} are paused. Events for it are kept as skipped until you resume.`);
  const onResumed = (answer: ResumeAnswer) => changed(resumedText(name, answer));
  const onRecovered = ({ queued }: RecoverAnswer) =>
    changed(recoveredText(queued), queued > 0 ? 'success' : 'warning');
  const onSaved = (saved: Connection | null) => {
    if (!saved) return setOpenState(null);
    if (current?.credentialsBound && !saved.credentialsBound) {
      return changed(
        `Saved. The receiver’s host changed, so the credentials of “${saved.displayName}” were unbound: nothing is delivered until you bind them again.`,
        'warning',
        { label: 'Bind credentials', run: () => setOpen('bind') },
      );
    }
    changed(`Saved the changes to “${saved.displayName}”.`);
  };
  return {
    open,
    setOpen,
    notice,
    setNotice,
    noticeRef: ref,
    test,
    skipped,
    onPaused,
    onResumed,
    onRecovered,
    onSaved,
  };
}

export type ConnectionPage = ReturnType<typeof useConnectionPage>;

import { useMemo, useState } from 'preact/hooks';
import type { RecoverAnswer } from '../api-types.js';
import { api } from '../api.js';
import { useAction } from '../hooks.js';
import { rangeAt, type RecoverRange } from './recoverRange.js';
import { toLocalInput } from './times.js';
import { useDeliveryCount } from './useDeliveryCount.js';

export const RECOVER_STATUSES = ['failed', 'skipped'] as const;
export type RecoverStatus = (typeof RECOVER_STATUSES)[number];

/**
 * "Recover failed deliveries" at `base`: the range and statuses chosen, the count of what they match
 * (counted again as they change), and the request that queues them again.
 */
export function useRecover(base: string, onRecovered: (answer: RecoverAnswer) => void) {
  // A preset range counts back from when it was chosen; the request counts back from when it is sent.
  const [chosenAt, setChosenAt] = useState(() => Date.now());
  const [range, setRangeState] = useState<RecoverRange>(() => ({
    choice: '24h',
    since: toLocalInput(Date.now() - 24 * 3600 * 1000),
    until: '',
  }));
  const [statuses, setStatuses] = useState<RecoverStatus[]>(['failed']);
  const setRange = (next: Partial<RecoverRange>) => {
    setChosenAt(Date.now());
    setRangeState((current) => ({ ...current, ...next }));
  };
  const checked = useMemo(() => rangeAt(range, chosenAt), [range, chosenAt]);
  const query = useMemo(
    () => ('problem' in checked || statuses.length === 0 ? null : { status: statuses.join(','), ...checked }),
    [checked, statuses],
  );
  const count = useDeliveryCount(base, query);

  const recover = useAction(async () => {
    const now = rangeAt(range, Date.now());
    if ('problem' in now) return;
    onRecovered(await api<RecoverAnswer>('POST', `${base}/recover`, { body: { ...now, statuses } }));
  });
  const toggleStatus = (status: RecoverStatus, on: boolean) =>
    setStatuses((current) => RECOVER_STATUSES.filter((s) => (s === status ? on : current.includes(s))));
  return {
    range,
    setRange,
    statuses,
    toggleStatus,
    problem: 'problem' in checked ? checked : null,
    count,
    recover,
  };
}

export type Recover = ReturnType<typeof useRecover>;

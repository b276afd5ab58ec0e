// Asking again every few seconds while the tab is visible, and at once when it is shown again.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../../common/api.js';

interface Poll<T> {
  data: T | undefined;
  /** The last refresh's failure; what was shown before stays shown. */
  error: ApiError | undefined;
  /** When the data on screen arrived. */
  updatedAt: Date | undefined;
  reload(): void;
}

/**
 * Loads now and again every `everyMs` while the tab is visible. A hidden tab asks nothing (no
 * one is looking, and the server is spared); it loads at once when it is shown again. A change of
 * `key` (another range) starts over; a request that was replaced is abandoned.
 */
export function usePlatformPoll<T>(
  load: (signal: AbortSignal) => Promise<T>,
  key: string,
  everyMs: number,
): Poll<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [updatedAt, setUpdatedAt] = useState<Date | undefined>(undefined);
  const [round, setRound] = useState(0);
  const loader = useRef(load);
  loader.current = load;

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let controller: AbortController | undefined;
    let stopped = false;
    const visible = () => document.visibilityState === 'visible';
    const schedule = () => {
      clearTimeout(timer);
      if (!stopped && visible()) timer = setTimeout(run, everyMs);
    };
    function run() {
      clearTimeout(timer);
      controller?.abort();
      const mine = new AbortController();
      controller = mine;
      loader
        .current(mine.signal)
        .then((value) => {
          if (mine.signal.aborted) return;
          setData(value);
          setError(undefined);
          setUpdatedAt(new Date());
        })
        .catch((reason: unknown) => {
          if (mine.signal.aborted) return;
          setError(reason instanceof ApiError ? reason : new ApiError(0, 'unknown', String(reason)));
        })
        .finally(() => {
          if (!mine.signal.aborted) schedule();
        });
    }
    const onVisibility = () => {
      if (visible()) run();
      else clearTimeout(timer);
    };
    run();
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      stopped = true;
      clearTimeout(timer);
      controller?.abort();
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [key, round, everyMs]);

  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { data, error, updatedAt, reload };
}

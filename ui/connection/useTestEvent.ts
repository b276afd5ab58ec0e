import { useEffect, useRef, useState } from 'preact/hooks';
import type { Delivery, TestEventAnswer } from '../api-types.js';
import { api, ApiError } from '../api.js';

/** Statuses that say how a test went: it landed, it failed, or the receiver refused it once. */
const LANDED = new Set(['delivered', 'failed', 'retrying', 'cancelled', 'skipped']);
const POLL_MS = 800;
/** After this, the outcome is left to the event log (a slow receiver, a long queue). */
const GIVE_UP_MS = 60_000;

export type TestEvent =
  | { phase: 'idle' }
  | { phase: 'sending' }
  | { phase: 'waiting' | 'landed' | 'slow'; sent: TestEventAnswer; delivery: Delivery | null }
  | { phase: 'refused'; error: ApiError }
  | { phase: 'unreadable'; sent: TestEventAnswer; error: ApiError };

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  });

/** Reads the delivery until it lands (or it is time to give up), telling `show` each answer. */
async function follow(
  url: string,
  sent: TestEventAnswer,
  signal: AbortSignal,
  show: (state: TestEvent) => void,
): Promise<void> {
  const started = Date.now();
  let delivery: Delivery | null = null;
  while (!signal.aborted) {
    await sleep(POLL_MS, signal);
    if (signal.aborted) return;
    try {
      delivery = await api<Delivery>('GET', url, { signal });
    } catch (error) {
      // A moment offline, or too many requests, is tried again on the next turn; a refusal is final.
      const final =
        error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429;
      if (final && !signal.aborted) return show({ phase: 'unreadable', sent, error });
    }
    if (signal.aborted) return;
    if (delivery && LANDED.has(delivery.status)) return show({ phase: 'landed', sent, delivery });
    if (Date.now() - started > GIVE_UP_MS) return show({ phase: 'slow', sent, delivery });
    show({ phase: 'waiting', sent, delivery });
  }
}

/** "Send test event" for the connection at `base`: the request, then its delivery followed until it lands. */
export function useTestEvent(base: string, onLanded: () => void) {
  const [state, setState] = useState<TestEvent>({ phase: 'idle' });
  const running = useRef<AbortController | null>(null);
  const landed = useRef(onLanded);
  landed.current = onLanded;
  useEffect(() => () => running.current?.abort(), []);

  async function send() {
    running.current?.abort();
    const controller = new AbortController();
    running.current = controller;
    setState({ phase: 'sending' });
    try {
      const sent = await api<TestEventAnswer>('POST', `${base}/test`, { body: {} });
      setState({ phase: 'waiting', sent, delivery: null });
      landed.current();
      const url = `${base}/events/${encodeURIComponent(sent.deliveryId)}`;
      await follow(url, sent, controller.signal, (next) => {
        setState(next);
        if (next.phase !== 'waiting') landed.current();
      });
    } catch (error) {
      if (controller.signal.aborted) return;
      setState({
        phase: 'refused',
        error: error instanceof ApiError ? error : new ApiError(0, 'unknown', String(error)),
      });
    }
  }
  const dismiss = () => {
    running.current?.abort();
    setState({ phase: 'idle' });
  };
  return { state, send, dismiss, busy: state.phase === 'sending' || state.phase === 'waiting' };
}

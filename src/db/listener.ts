import pg from 'pg';
import type { Logger } from 'pino';
import { KEEPALIVE_AFTER_MS, reconnectDelayMs } from './reconnect.js';

// A connection attempt to a server that drops packets would otherwise wait for the OS (minutes).
const CONNECT_TIMEOUT_MS = 5_000;

/** A pause that `cancel` ends early, so stopping never waits out a backoff. */
function cancellablePause() {
  let cancel: (() => void) | undefined;
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        cancel = undefined;
        resolve();
      }
      cancel = done;
    });
  return { wait, cancel: () => cancel?.() };
}

interface Listening {
  url: string;
  channel: string;
  onNotify: () => void;
  /** An error on an open connection; the first one during opening fails the opening instead. */
  onError: (client: pg.Client, error: Error) => void;
  /** The connection being opened, so stopping can end it; undefined once settled. */
  connecting: (client: pg.Client | undefined) => void;
}

async function openListening(l: Listening): Promise<pg.Client> {
  const next = new pg.Client({
    connectionString: l.url,
    application_name: 'hubgate-listen',
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // An idle LISTEN connection sends nothing: without keepalive a silently dropped one looks alive.
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_AFTER_MS,
  });
  let failure: Error | undefined;
  next.on('notification', l.onNotify);
  next.on('error', (error) => {
    failure ??= error;
    l.onError(next, error);
  });
  l.connecting(next);
  try {
    await next.connect();
    await next.query(`listen ${l.channel}`);
    if (failure) throw failure;
    return next;
  } catch (error) {
    await next.end().catch(() => {});
    throw error;
  } finally {
    l.connecting(undefined);
  }
}

/**
 * LISTEN on `channel` over a connection of its own, kept open for as long as it is wanted: when it
 * is lost it is re-opened with backoff (reconnectDelayMs, never more than 5 s apart) until that
 * works, however long the server is gone. `onNotify` is also called once whenever listening starts
 * or starts again, since announcements made before were not heard. The first connection is opened
 * before this resolves (fail fast at start-up). The function it resolves to stops everything: no
 * timer, no connection, no try in flight is left behind.
 */
export async function listenForever(
  url: string,
  channel: string,
  onNotify: () => void,
  logger: Logger | undefined,
): Promise<() => Promise<void>> {
  const state: ListenState = { stopped: false, pause: cancellablePause() };

  const listening: Listening = {
    url,
    channel,
    onNotify,
    connecting: (next) => (state.connecting = next),
    onError: (next, error) => {
      if (state.client !== next) return;
      state.client = undefined;
      void next.end().catch(() => {});
      if (state.stopped) return;
      logger?.warn({ err: { message: error.message }, channel }, 'LISTEN connection lost; re-opening it');
      state.reopening = reopen();
    },
  };

  async function reopen(): Promise<void> {
    for (let failures = 0; !state.stopped; failures++) {
      try {
        const next = await openListening(listening);
        if (state.stopped) {
          await next.end().catch(() => {});
          return;
        }
        state.client = next;
        logger?.info({ channel, tries: failures + 1 }, 'LISTEN connection re-opened');
        onNotify();
        return;
      } catch (error) {
        if (state.stopped) return;
        const retryInMs = Math.round(reconnectDelayMs(failures));
        const err = { message: (error as Error).message };
        logger?.debug(
          { err, channel, tries: failures + 1, retryInMs },
          'LISTEN connection could not be re-opened yet',
        );
        await state.pause.wait(retryInMs);
      }
    }
  }

  state.client = await openListening(listening);
  onNotify();
  return () => stopListening(state);
}

interface ListenState {
  stopped: boolean;
  client?: pg.Client;
  connecting?: pg.Client;
  reopening?: Promise<void>;
  pause: ReturnType<typeof cancellablePause>;
}

async function stopListening(state: ListenState): Promise<void> {
  state.stopped = true;
  state.pause.cancel();
  await state.connecting?.end().catch(() => {});
  await state.reopening;
  await state.client?.end().catch(() => {});
  state.client = undefined;
}

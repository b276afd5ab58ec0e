import pg from 'pg';
import type { Logger } from 'pino';
import { KEEPALIVE_AFTER_MS, reconnectDelayMs } from './reconnect.js';

// A connection attempt to a server that drops packets would otherwise wait for the OS (minutes).
const CONNECT_TIMEOUT_MS = 5_000;

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
  let stopped = false;
  let client: pg.Client | undefined;
  let connecting: pg.Client | undefined;
  let reopening: Promise<void> | undefined;
  let cancelPause: (() => void) | undefined;

  const onLost = (next: pg.Client, error: Error) => {
    if (client !== next) return;
    client = undefined;
    void next.end().catch(() => {});
    if (stopped) return;
    logger?.warn({ err: { message: error.message }, channel }, 'LISTEN connection lost; re-opening it');
    reopening = reopen();
  };

  async function open(): Promise<pg.Client> {
    const next = new pg.Client({
      connectionString: url,
      application_name: 'hubgate-listen',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // An idle LISTEN connection sends nothing: without keepalive a silently dropped one looks alive.
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_AFTER_MS,
    });
    let failure: Error | undefined;
    next.on('notification', onNotify);
    next.on('error', (error) => {
      failure ??= error;
      onLost(next, error);
    });
    connecting = next;
    try {
      await next.connect();
      await next.query(`listen ${channel}`);
      if (failure) throw failure;
      return next;
    } catch (error) {
      await next.end().catch(() => {});
      throw error;
    } finally {
      connecting = undefined;
    }
  }

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        cancelPause = undefined;
        resolve();
      }
      cancelPause = done;
    });

  async function reopen(): Promise<void> {
    for (let failures = 0; !stopped; failures++) {
      try {
        const next = await open();
        if (stopped) {
          await next.end().catch(() => {});
          return;
        }
        client = next;
        logger?.info({ channel, tries: failures + 1 }, 'LISTEN connection re-opened');
        onNotify();
        return;
      } catch (error) {
        if (stopped) return;
        const delayMs = Math.round(reconnectDelayMs(failures));
        logger?.debug(
          { err: { message: (error as Error).message }, channel, tries: failures + 1, retryInMs: delayMs },
          'LISTEN connection could not be re-opened yet',
        );
        await pause(delayMs);
      }
    }
  }

  client = await open();
  onNotify();
  return async () => {
    stopped = true;
    cancelPause?.();
    await connecting?.end().catch(() => {});
    await reopening;
    await client?.end().catch(() => {});
    client = undefined;
  };
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Cleanup } from './cleanup.js';
import { waitUntil } from './wait.js';

export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

/** What the receiver answers to the n-th request (0-based); the default is 200. */
export type Responder = (request: Received, index: number, response: ServerResponse) => void | Promise<void>;

export type Receiver = Awaited<ReturnType<typeof listen>>;

const answerOk: Responder = (_r, _i, res) => {
  res.end('ok');
};

/**
 * A webhook receiver on 127.0.0.1 that records every request it gets, answering 200 unless `respond`
 * says otherwise. Given a test's `t` first, it is closed when the test ends (`t.after`), so a test
 * needs no try/finally: `const receiver = await startReceiver(t);`.
 */
export function startReceiver(respond?: Responder): Promise<Receiver>;
export function startReceiver(cleanup: Cleanup, respond?: Responder): Promise<Receiver>;
export async function startReceiver(first?: Cleanup | Responder, second?: Responder): Promise<Receiver> {
  const cleanup = typeof first === 'object' ? first : undefined;
  const receiver = await listen((typeof first === 'function' ? first : second) ?? answerOk);
  cleanup?.after(() => receiver.close());
  return receiver;
}

async function listen(respond: Responder) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(entry);
      void Promise.resolve(respond(entry, received.length - 1, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    received,
    /** Resolves once `count` requests have arrived (fails the test after `ms`). */
    waitFor: (count: number, ms = 10_000): Promise<Received[]> =>
      waitUntil(() => received.length >= count && received, {
        message: () => `${count} requests to the receiver (${received.length} came)`,
        timeoutMs: ms,
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

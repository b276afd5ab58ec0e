import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { SHARED_BUFFERS, type ThreadReply, type ThreadRequest } from './embedded-thread.js';

/**
 * The embedded database's own thread (docs/operators/deployment.md#embedded-mode): PGlite runs here,
 * so a long statement keeps this thread busy and never the one answering HTTP. It opens the data
 * directory it is given, answers each request in the order it came, and closes the database when
 * asked; the main thread holds the directory's lock and decides everything else.
 */
const { dataDir, initOnly } = workerData as { dataDir: string; initOnly: boolean };
const port = parentPort!;

// PGlite's own start parameters plus a smaller buffer cache than PostgreSQL's 128 MB: WebAssembly
// memory only grows, so every buffer page once touched stays resident for the life of the thread
// (docs/benchmarks.md: resident memory of the embedded mode).
const START_PARAMS = [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`];

// The umask is per process and was set by the main thread (data-dir.ts) before this thread started.
const database = await PGlite.create(dataDir, { startParams: START_PARAMS });
if (initOnly) {
  // A new data directory: PGlite ran initdb in a second instance inside this thread. Its memory is
  // given back only when the thread ends, so this thread ends here and another opens the directory.
  await database.close();
  process.exit(0);
}

/** What crosses the thread boundary of an error: its message and PostgreSQL's fields (`code`, …). */
function describe(error: unknown): Extract<ThreadReply, { ok: false }>['error'] {
  if (!(error instanceof Error)) return { message: String(error) };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === 'string' || typeof value === 'number') fields[key] = value;
  }
  return { ...fields, message: error.message };
}

async function answer(request: ThreadRequest): Promise<ThreadReply> {
  try {
    switch (request.op) {
      case 'query': {
        const result = await database.query(request.sql, request.params);
        return { id: request.id, ok: true, rows: result.rows, affectedRows: result.affectedRows };
      }
      case 'close':
        if (!database.closed) await database.close();
        return { id: request.id, ok: true, rows: [] };
    }
  } catch (error) {
    return { id: request.id, ok: false, error: describe(error) };
  }
}

// One request at a time, in order: PGlite is one session, and the main thread sends a transaction's
// statements one after another anyway.
let queue: Promise<unknown> = Promise.resolve();
port.on('message', (request: ThreadRequest) => {
  queue = queue.then(async () => port.postMessage(await answer(request)));
});
port.postMessage({ id: 0, ok: true, rows: [] } satisfies ThreadReply);

import { platformKey } from './platform-key.js';
import { serve } from './serve.js';
import { worker } from './worker.js';
import { USAGE, UsageError } from './usage.js';
import { parseConfig } from '../config.js';
import { openStorage } from '../db/storage.js';

async function migrate(): Promise<void> {
  const { database } = await openStorage(parseConfig(), undefined, { migrate: true });
  await database.close();
  process.stdout.write('database schema is up to date\n');
}

async function run(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  switch (command) {
    case 'serve':
      return serve(parseConfig());
    case 'worker':
      return worker(parseConfig());
    case 'migrate':
      return migrate();
    case 'platform-key':
      return platformKey(parseConfig(), args);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

/** Runs the command line; every failure ends the process with one line (usage errors exit 2). */
export function main(argv: string[]): void {
  run(argv).catch((error: unknown) => {
    // One clear line, never a stack trace, for what a user can fix; usage errors exit 2.
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof UsageError) {
      process.stderr.write(`hubgate: ${message}\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`hubgate: ${message}\n`);
    process.exit(1);
  });
}

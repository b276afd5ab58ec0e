import { parseConfig } from '../config.js';
import { USAGE, UsageError } from './usage.js';

/**
 * What a command reads and writes: the process's own environment and standard streams when run
 * from `main`, captured ones when a test calls `runCommand` in its own process.
 */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

// Each command's module loads when it runs: `hubgate --help` and a mistyped command answer at once,
// without loading the server (about a second).
async function migrate(io: CliIo): Promise<void> {
  const { openStorage } = await import('../db/storage.js');
  const { database } = await openStorage(parseConfig(io.env), undefined, { migrate: true });
  await database.close();
  io.stdout('database schema is up to date\n');
}

async function dispatch(argv: string[], io: CliIo): Promise<void> {
  const [command, ...args] = argv;
  switch (command) {
    case 'serve':
      return (await import('./serve.js')).serve(parseConfig(io.env));
    case 'worker':
      return (await import('./worker.js')).worker(parseConfig(io.env));
    case 'migrate':
      return migrate(io);
    case 'platform-key': {
      const config = parseConfig(io.env);
      return (await import('./platform-key.js')).platformKey(config, args, io.stdout);
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      io.stdout(`${USAGE}\n`);
      return;
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

/**
 * Runs one command and answers its exit code: 0, 2 for a usage error (with the usage), 1 for any
 * other failure, told in one line and never a stack trace, for what a user can fix. It never ends
 * the process: `serve` and `worker` answer 0 once they run, and run on until a signal stops them.
 */
export async function runCommand(argv: string[], io: CliIo): Promise<number> {
  try {
    await dispatch(argv, io);
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof UsageError) {
      io.stderr(`hubgate: ${message}\n${USAGE}\n`);
      return 2;
    }
    io.stderr(`hubgate: ${message}\n`);
    return 1;
  }
}

/** Runs the command line in this process; a failure ends the process with its exit code. */
export function main(argv: string[]): void {
  const io: CliIo = {
    env: process.env,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  };
  void runCommand(argv, io).then((code) => {
    // A failed start may leave handles open (a database, a half-built app): end here, not when idle.
    if (code !== 0) process.exit(code);
  });
}

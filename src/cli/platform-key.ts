import { parseArgs as nodeParseArgs } from 'node:util';
import type { Config } from '../config.js';
import { isIdOf } from '../crypto/ids.js';
import { openStorage } from '../db/storage.js';
import { parseRfc3339 } from '../http/time.js';
import { createPlatformKey, listPlatformKeys, revokePlatformKey } from '../keys/platform-keys.js';
import { UsageError } from './usage.js';

/** A `hubgate platform-key …` command line, checked: nothing is opened before it is whole. */
export type PlatformKeyCommand =
  | { action: 'create'; name: string; expiresAt: Date | null }
  | { action: 'list' }
  | { action: 'revoke'; id: string };

/** node:util's parseArgs, with its complaints about the arguments turned into usage errors. */
const parseArgs: typeof nodeParseArgs = (config) => {
  try {
    return nodeParseArgs(config);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
};

function parseExpiresAt(value: string | undefined, now: Date): Date | null {
  if (value === undefined) return null;
  const expiresAt = parseRfc3339(value);
  if (!expiresAt) {
    throw new UsageError('--expires-at must be an RFC 3339 timestamp such as 2027-01-31T00:00:00Z');
  }
  if (expiresAt <= now) throw new UsageError('--expires-at must be in the future');
  return expiresAt;
}

/** The arguments after `platform-key`, or a UsageError saying what is wrong with them. */
export function parsePlatformKeyArgs(args: string[], now: Date): PlatformKeyCommand {
  const [action, ...rest] = args;
  if (action === 'create') {
    const { values } = parseArgs({
      args: rest,
      options: { name: { type: 'string' }, 'expires-at': { type: 'string' } },
      strict: true,
    });
    const name = values.name?.trim();
    if (!name || name.length > 100)
      throw new UsageError('platform-key create needs --name NAME (1 to 100 characters)');
    return { action, name, expiresAt: parseExpiresAt(values['expires-at'], now) };
  }
  if (action === 'list') {
    parseArgs({ args: rest, options: {}, strict: true });
    return { action };
  }
  if (action === 'revoke') {
    const { positionals } = parseArgs({ args: rest, options: {}, strict: true, allowPositionals: true });
    const [id] = positionals;
    if (!id || positionals.length !== 1)
      throw new UsageError('platform-key revoke needs one key ID (pkey_…)');
    return { action, id };
  }
  throw new UsageError('platform-key takes create, list or revoke');
}

/**
 * `hubgate platform-key create|list|revoke` (docs/operators/deployment.md): the only way platform keys come to be.
 * Prints one JSON value with `print`; the arguments are checked before the database is opened.
 */
export async function platformKey(
  config: Config,
  args: string[],
  print: (text: string) => void,
): Promise<void> {
  const now = new Date();
  const command = parsePlatformKeyArgs(args, now);
  const { database, keyring } = await openStorage(config);
  try {
    const db = database.kysely;
    let result: unknown;
    if (command.action === 'create') {
      const { name, expiresAt } = command;
      result = await createPlatformKey(db, keyring, { name, expiresAt }, now);
    } else if (command.action === 'list') result = await listPlatformKeys(db, now);
    else {
      const { id } = command;
      const record = isIdOf('pkey', id) ? await revokePlatformKey(db, id, now) : null;
      if (!record) throw new Error(`no platform key ${id}`);
      result = record;
    }
    print(`${JSON.stringify(result)}\n`);
  } finally {
    await database.close();
  }
}

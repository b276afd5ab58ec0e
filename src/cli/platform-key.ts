import { parseArgs as nodeParseArgs } from 'node:util';
import type { Config } from '../config.js';
import { isIdOf } from '../crypto/ids.js';
import { openStorage } from '../db/storage.js';
import { createPlatformKey, listPlatformKeys, revokePlatformKey } from '../keys/platform-keys.js';
import { UsageError } from './usage.js';

/** node:util's parseArgs, with its complaints about the arguments turned into usage errors. */
const parseArgs: typeof nodeParseArgs = (config) => {
  try {
    return nodeParseArgs(config);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
};

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

/** `hubgate platform-key create|list|revoke` (contract §1): the only way platform keys come to be. */
export async function platformKey(config: Config, args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const now = new Date();
  if (action === 'create') {
    const { values } = parseArgs({
      args: rest,
      options: { name: { type: 'string' }, 'expires-at': { type: 'string' } },
      strict: true,
    });
    const name = values.name?.trim();
    if (!name || name.length > 100)
      throw new UsageError('platform-key create needs --name NAME (1 to 100 characters)');
    let expiresAt: Date | null = null;
    if (values['expires-at'] !== undefined) {
      expiresAt = new Date(values['expires-at']);
      if (Number.isNaN(expiresAt.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(values['expires-at'])) {
        throw new UsageError('--expires-at must be an RFC 3339 timestamp such as 2027-01-31T00:00:00Z');
      }
      if (expiresAt <= now) throw new UsageError('--expires-at must be in the future');
    }
    const { database, keyring } = await openStorage(config);
    try {
      print(await createPlatformKey(database.kysely, keyring, { name, expiresAt }, now));
    } finally {
      await database.close();
    }
    return;
  }
  if (action === 'list') {
    parseArgs({ args: rest, options: {}, strict: true });
    const { database } = await openStorage(config);
    try {
      print(await listPlatformKeys(database.kysely, now));
    } finally {
      await database.close();
    }
    return;
  }
  if (action === 'revoke') {
    const { positionals } = parseArgs({ args: rest, options: {}, strict: true, allowPositionals: true });
    const [id] = positionals;
    if (!id || positionals.length !== 1)
      throw new UsageError('platform-key revoke needs one key ID (pkey_…)');
    const { database } = await openStorage(config);
    try {
      const record = isIdOf('pkey', id) ? await revokePlatformKey(database.kysely, id, now) : null;
      if (!record) throw new Error(`no platform key ${id}`);
      print(record);
    } finally {
      await database.close();
    }
    return;
  }
  throw new UsageError('platform-key takes create, list or revoke');
}

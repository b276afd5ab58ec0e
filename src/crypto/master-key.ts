import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, type Config } from '../config.js';

const MIN_KEY_BYTES = 32;
export const SECRET_KEY_FILE = 'secret.key';

function decode(value: string, origin: string): Buffer {
  const trimmed = value.trim();
  const bytes = /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed) ? Buffer.from(trimmed, 'base64') : Buffer.alloc(0);
  if (bytes.length < MIN_KEY_BYTES) {
    throw new ConfigError(
      `invalid ${origin}: expected at least ${MIN_KEY_BYTES} random bytes, base64-encoded`,
    );
  }
  return bytes;
}

/**
 * HUBGATE_SECRET_KEY as docs/operators/deployment.md has it: taken from the environment when set; in embedded mode
 * generated once into DATA_DIR (mode 0600) and reused; with PostgreSQL, required, because several
 * processes must share it and a generated one would silently differ between them.
 */
export function resolveMasterKey(config: Config): Buffer {
  if (config.secretKey !== undefined) return decode(config.secretKey, 'HUBGATE_SECRET_KEY');
  if (config.database.kind === 'postgres') {
    throw new ConfigError(
      'HUBGATE_SECRET_KEY is required when DATABASE_URL is set: generate one with `openssl rand -base64 32` and give every hubgate process the same value',
    );
  }
  const dir = config.database.dataDir;
  const file = join(dir, SECRET_KEY_FILE);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, `${randomBytes(MIN_KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return decode(readFileSync(file, 'utf8'), file);
}

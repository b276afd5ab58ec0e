import type { Kysely } from 'kysely';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import { displayPrefix, generateToken, isWellFormedToken } from '../crypto/api-tokens.js';
import { newId } from '../crypto/ids.js';
import type { Keyring } from '../crypto/keyring.js';
import type { DB } from '../db/schema.js';
import { isoOrNull } from '../http/schemas.js';
import {
  findPlatformKeyByHash,
  insertPlatformKey,
  listPlatformKeyRows,
  revokePlatformKeyRow,
  touchPlatformKey,
  type PlatformKeyRow,
} from './platform-store.js';

/** What the CLI prints about a platform key; the secret only ever in the answer to `create`. */
export interface PlatformKeyRecord {
  id: string;
  name: string;
  prefix: string;
  status: 'active' | 'expired' | 'revoked';
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

function toRecord(row: PlatformKeyRow, now: Date): PlatformKeyRecord {
  const expired = row.expires_at !== null && new Date(row.expires_at) <= now;
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    status: row.revoked_at ? 'revoked' : expired ? 'expired' : 'active',
    createdAt: new Date(row.created_at).toISOString(),
    expiresAt: isoOrNull(row.expires_at),
    lastUsedAt: isoOrNull(row.last_used_at),
    revokedAt: isoOrNull(row.revoked_at),
  };
}

const CLI_ORIGIN = (at: Date): AuditOrigin => ({
  actorType: 'cli',
  actorId: null,
  ip: null,
  requestId: null,
  at,
});

export interface NewPlatformKey {
  id: string;
  prefix: string;
  /** The secret, shown once: only its hash is stored. */
  secret: string;
  expiresAt: string | null;
}

/**
 * A new platform key and its audit row, written with `db`: the caller's transaction when the key is
 * part of a larger change (first-run setup), so the key, its audit row and that change commit together.
 */
export async function createPlatformKeyWith(
  db: Kysely<DB>,
  keyring: Keyring,
  input: { name: string; expiresAt: Date | null },
  origin: AuditOrigin,
): Promise<NewPlatformKey> {
  const secret = generateToken('plt_');
  const row: PlatformKeyRow = {
    id: newId('pkey'),
    name: input.name,
    prefix: displayPrefix(secret),
    secret_hash: keyring.hashToken('token-hash', secret),
    created_at: origin.at,
    expires_at: input.expiresAt,
    revoked_at: null,
    last_used_at: null,
  };
  await insertPlatformKey(db, row);
  await recordAudit(db, origin, {
    action: 'platform_key.create',
    tenantId: null,
    targetType: 'platform_key',
    targetId: row.id,
    metadata: { name: row.name, prefix: row.prefix },
  });
  return { id: row.id, prefix: row.prefix, secret, expiresAt: isoOrNull(row.expires_at) };
}

/** A new platform key made by the CLI (docs/operators/deployment.md), in a transaction of its own. */
export async function createPlatformKey(
  db: Kysely<DB>,
  keyring: Keyring,
  input: { name: string; expiresAt: Date | null },
  now: Date,
): Promise<NewPlatformKey> {
  return db.transaction().execute((trx) => createPlatformKeyWith(trx, keyring, input, CLI_ORIGIN(now)));
}

export async function listPlatformKeys(db: Kysely<DB>, now: Date): Promise<PlatformKeyRecord[]> {
  return (await listPlatformKeyRows(db)).map((row) => toRecord(row, now));
}

export async function revokePlatformKey(
  db: Kysely<DB>,
  id: string,
  now: Date,
): Promise<PlatformKeyRecord | null> {
  return db.transaction().execute(async (trx) => {
    const row = await revokePlatformKeyRow(trx, id, now);
    if (!row) return null;
    await recordAudit(trx, CLI_ORIGIN(now), {
      action: 'platform_key.revoke',
      tenantId: null,
      targetType: 'platform_key',
      targetId: id,
    });
    return toRecord(row, now);
  });
}

// last_used_at is bookkeeping: written at most once a minute per key and process, never per request.
const TOUCH_INTERVAL_MS = 60_000;

export function createPlatformKeyVerifier(db: Kysely<DB>, keyring: Keyring) {
  const lastTouched = new Map<string, number>();
  return async function verifyPlatformKey(token: string, now: Date): Promise<string | null> {
    if (!isWellFormedToken('plt_', token)) return null;
    const row = await findPlatformKeyByHash(db, keyring.hashToken('token-hash', token));
    if (!row || row.revoked_at !== null) return null;
    if (row.expires_at !== null && new Date(row.expires_at) <= now) return null;
    const touched = lastTouched.get(row.id) ?? 0;
    if (now.getTime() - touched >= TOUCH_INTERVAL_MS) {
      lastTouched.set(row.id, now.getTime());
      await touchPlatformKey(db, row.id, now);
    }
    return row.id;
  };
}

import type { Kysely } from 'kysely';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import { MODULE_KEYS } from '../access/catalog.js';
import { setupScopeOf } from '../access/scope.js';
import type { AppContext } from '../context.js';
import { randomBase62 } from '../crypto/base62.js';
import { newId } from '../crypto/ids.js';
import type { Keyring } from '../crypto/keyring.js';
import { hashPassword } from '../crypto/passwords.js';
import type { DB } from '../db/schema.js';
import { HttpProblem } from '../http/problem.js';
import { createPlatformKeyWith, type NewPlatformKey } from '../keys/platform-keys.js';
import { clearAttempts, reserveAttempt, startSession, type SignedIn } from '../sign-in/sign-in.js';
import { createTenantWith, createUserWith, hasAnyUser } from '../tenants/tenants.js';
import {
  deleteAllSetupTokens,
  deleteExpiredSetupTokens,
  insertSetupToken,
  isLiveSetupToken,
  lockSetup,
} from './store.js';

/** How long a setup token printed by `serve` stays valid (docs/operators/setup.md). */
export const SETUP_TOKEN_LIFETIME_MS = 24 * 60 * 60 * 1000;
const TOKEN_LENGTH = 32;
const TOKEN_SHAPE = new RegExp(`^[0-9A-Za-z]{${TOKEN_LENGTH}}$`);

const hashOf = (keyring: Keyring, token: string) => keyring.hashToken('setup-token-hash', token);

export const setupDone = (): HttpProblem =>
  new HttpProblem('conflict', 'This hub is already set up: sign in instead.');

/** Setup is open while the database holds no user, whoever made the users since. */
export async function isSetupRequired(db: Kysely<DB>): Promise<boolean> {
  return !(await hasAnyUser(db));
}

/**
 * A new one-time setup token while the database holds no user (null once one exists), for `serve`
 * to print at start-up. Tokens made by earlier starts stay valid until they expire; expired ones
 * are swept here. Only a keyed hash is stored: the token exists in this process's answer only.
 */
export async function issueSetupToken(
  db: Kysely<DB>,
  keyring: Keyring,
  now: Date,
): Promise<{ token: string; expiresAt: Date } | null> {
  if (!(await isSetupRequired(db))) return null;
  const token = randomBase62(TOKEN_LENGTH);
  const expiresAt = new Date(now.getTime() + SETUP_TOKEN_LIFETIME_MS);
  await db.transaction().execute(async (trx) => {
    await deleteExpiredSetupTokens(trx, now);
    await insertSetupToken(trx, {
      token_hash: hashOf(keyring, token),
      created_at: now,
      expires_at: expiresAt,
    });
  });
  return { token, expiresAt };
}

/** Where a newcomer finishes setting up: the token travels in the fragment, never to a server. */
export const setupUrl = (publicOrigin: string, token: string): string =>
  `${publicOrigin}/setup#token=${token}`;

export interface SetupInput {
  token: string;
  organizationName: string;
  email: string;
  password: string;
}

export interface SetupDone {
  signedIn: SignedIn;
  platformKey: NewPlatformKey;
}

/**
 * First-run setup (docs/operators/setup.md). `throttleKey` names the client (its address bucket): ten wrong
 * tokens from it within 15 minutes and it gets 429, the right token included, as a sign-in does.
 * A wrong token changes nothing but that count; the right one makes, in one transaction, the
 * tenant entitled to every module, its PLATFORM_ADMIN, a platform key named `setup` and a session,
 * and then no token works any more. Concurrent setups are serialized: one wins, the others get 409.
 */
export async function completeSetup(
  ctx: AppContext,
  origin: AuditOrigin,
  throttleKey: string,
  input: SetupInput,
): Promise<SetupDone> {
  const now = origin.at;
  await reserveAttempt(
    ctx.db,
    throttleKey,
    now,
    'Too many wrong setup tokens from this address; try again later.',
  );
  // The shape check spares a lookup, not a count: a malformed guess is still a guess.
  const tokenHash = TOKEN_SHAPE.test(input.token) ? hashOf(ctx.keyring, input.token) : null;
  if (!tokenHash || !(await isLiveSetupToken(ctx.db, tokenHash, now))) {
    // A concurrent setup may have finished since the route's check, and spent every token with
    // it: that is "already set up", not a wrong token (docs/operators/setup.md: 409 whatever the token).
    if (await hasAnyUser(ctx.db)) throw setupDone();
    await recordAudit(ctx.db, origin, { action: 'setup.failure', tenantId: null });
    throw wrongToken();
  }

  // Hashing is slow on purpose; do it before the transaction so no connection waits on it.
  const passwordHash = await hashPassword(input.password);
  return ctx.db.transaction().execute(async (trx) => {
    await lockSetup(trx);
    if (await hasAnyUser(trx)) throw setupDone();
    // Again under the lock, where it counts: a start of serve may have swept it since, expired.
    if (!(await isLiveSetupToken(trx, tokenHash, now))) throw wrongToken();
    const { organizationName, email } = input;
    const done = await createFirstTenant(trx, ctx, origin, { organizationName, email, passwordHash });
    await deleteAllSetupTokens(trx);
    await clearAttempts(trx, throttleKey);
    return done;
  });
}

/**
 * What setup makes, with `trx` holding the setup lock: the tenant entitled to every module, its
 * PLATFORM_ADMIN, a platform key named `setup` and a session, each row naming the new user as actor.
 */
async function createFirstTenant(
  trx: Kysely<DB>,
  ctx: AppContext,
  origin: AuditOrigin,
  input: { organizationName: string; email: string; passwordHash: string },
): Promise<SetupDone> {
  const userId = newId('usr');
  const actor: AuditOrigin = { ...origin, actorType: 'user', actorId: userId };
  const tenant = await createTenantWith(trx, actor, {
    name: input.organizationName,
    entitlements: MODULE_KEYS,
  });
  // The tenant made a line above: its first user, session and audit rows go in it. No credential
  // of it exists yet; the setup token, checked under the lock, is what lets this happen (once).
  const scope = setupScopeOf(tenant);
  const user = await createUserWith(trx, scope, actor, {
    id: userId,
    email: input.email,
    role: 'PLATFORM_ADMIN',
    passwordHash: input.passwordHash,
  });
  const platformKey = await createPlatformKeyWith(
    trx,
    ctx.keyring,
    { name: 'setup', expiresAt: null },
    actor,
  );
  const session = await startSession(trx, ctx, scope, user.id, 'password', origin.at);
  await recordAudit(trx, actor, {
    action: 'setup.complete',
    tenantId: scope.tenantId,
    targetType: 'tenant',
    targetId: tenant.id,
    metadata: {
      organizationName: tenant.name,
      email: user.email,
      entitlements: tenant.entitlements,
      platformKeyId: platformKey.id,
      platformKeyPrefix: platformKey.prefix,
    },
  });
  return { signedIn: { user, scope, ...session }, platformKey };
}

const wrongToken = (): HttpProblem =>
  new HttpProblem('invalid_credentials', 'The setup token is wrong or has expired.');

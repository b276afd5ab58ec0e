import { randomBytes } from 'node:crypto';
import {
  generateRegistrationOptions,
  verifyRegistrationResponse,
  type PublicKeyCredentialCreationOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import type { SessionPrincipal } from '../access/principal.js';
import type { TenantScope } from '../access/scope.js';
import { endUserSessions } from '../access/sessions.js';
import type { AppContext } from '../context.js';
import { isIdOf, newId } from '../crypto/ids.js';
import { listPage, type Page, type PageQuery } from '../http/pagination.js';
import { HttpProblem, notFound } from '../http/problem.js';
import { isoOrNull } from '../http/schemas.js';
import { setPasswordSignIn, userHandleOf } from '../tenants/users.js';
import { nameForAaguid } from './authenticators.js';
import { rememberChallenge, useChallenge } from './challenges.js';
import { ALGORITHMS, CEREMONY_TIMEOUT_MS, relyingPartyOf } from './relying-party.js';
import type { PasskeyRecord } from './schemas.js';
import {
  countPasskeys,
  credentialsOfUser,
  deletePasskeyRow,
  handleOfUser,
  insertPasskey,
  listPasskeyRows,
  lockSignInMethods,
  passwordSignInEnabled,
  type PasskeyRow,
} from './store.js';

export const toPasskeyRecord = (row: Omit<PasskeyRow, 'tenant_id'>, userHandle: string): PasskeyRecord => ({
  id: row.id,
  name: row.name,
  credentialId: row.credential_id,
  userHandle,
  createdAt: new Date(row.created_at).toISOString(),
  lastUsedAt: isoOrNull(row.last_used_at),
  backupEligible: row.backup_eligible,
  backedUp: row.backed_up,
  transports: row.transports,
});

/**
 * The options for `navigator.credentials.create()` (docs/api/passkeys.md): a discoverable credential, so
 * sign-in needs no e-mail; the user's passkeys excluded, so the same authenticator is not
 * registered twice; the challenge kept for this session only.
 */
export async function registrationOptions(
  ctx: AppContext,
  scope: TenantScope,
  session: SessionPrincipal,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const rp = relyingPartyOf(ctx.config);
  const fresh = isoBase64URL.fromBuffer(randomBytes(32));
  const handle = await userHandleOf(ctx.db, scope, session.userId, fresh);
  const existing = await credentialsOfUser(ctx.db, scope, session.userId);
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: session.email,
    userDisplayName: session.email,
    userID: isoBase64URL.toBuffer(handle),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((c) => ({ id: c.credential_id, transports: c.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    supportedAlgorithmIDs: ALGORITHMS,
  });
  await rememberChallenge(ctx.db, options.challenge, 'registration', session.sessionId, ctx.now());
  return options;
}

/**
 * Enough for every device and password manager a person uses; a bound, because each passkey is
 * sent back in every registration's `excludeCredentials`.
 */
export const MAX_PASSKEYS_PER_USER = 50;

// The transports WebAuthn defines; others (a future one, or junk) are dropped rather than stored
// and echoed back in `excludeCredentials`. They are hints: a passkey works without them.
const TRANSPORTS = new Set(['usb', 'nfc', 'ble', 'smart-card', 'hybrid', 'internal']);
const knownTransports = (transports: string[] | undefined): string[] => [
  ...new Set((transports ?? []).filter((t) => TRANSPORTS.has(t))),
];

const refused = (message: string) =>
  new HttpProblem('validation_failed', `response: ${message}`, { errors: [{ path: 'response', message }] });

/** The verified registration of the session's open challenge, or the 400 that says why not. */
async function verifiedRegistration(
  ctx: AppContext,
  session: SessionPrincipal,
  response: RegistrationResponseJSON,
  now: Date,
) {
  const rp = relyingPartyOf(ctx.config);
  const challenge = await useChallenge(
    ctx.db,
    response.response.clientDataJSON,
    'registration',
    session.sessionId,
    now,
  );
  if (!challenge)
    throw refused('answers no registration challenge of this session that is still open; start again');

  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
      supportedAlgorithmIDs: ALGORITHMS,
    });
  } catch (error) {
    // The verifier's reasons name what did not match (origin, RP ID, type); none is a secret.
    throw refused(`was refused: ${error instanceof Error ? error.message : 'not a valid registration'}`);
  }
  if (!verified.verified) throw refused('was refused');
  const info = verified.registrationInfo;
  // The ID kept is the one the authenticator signed; the browser's copy must say the same, and
  // WebAuthn allows no more than 1023 bytes (anything longer could never sign in).
  if (info.credential.id !== response.id || isoBase64URL.toBuffer(info.credential.id).length > 1023)
    throw refused('has a credential ID that is not the one the authenticator made, or is over 1023 bytes');
  return info;
}

/** Checks the authenticator's answer to the session's challenge and keeps the new passkey. */
export async function registerPasskey(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  session: SessionPrincipal,
  input: { response: RegistrationResponseJSON; name?: string },
): Promise<PasskeyRecord> {
  const now = origin.at;
  const info = await verifiedRegistration(ctx, session, input.response, now);
  // The options made the handle; registering without having asked for options is refused above.
  const handle = (await handleOfUser(ctx.db, scope, session.userId)) ?? '';

  const row: Omit<PasskeyRow, 'tenant_id'> = {
    id: newId('pky'),
    user_id: session.userId,
    credential_id: info.credential.id,
    public_key: isoBase64URL.fromBuffer(info.credential.publicKey),
    counter: info.credential.counter,
    transports: knownTransports(input.response.response.transports),
    backup_eligible: info.credentialDeviceType === 'multiDevice',
    backed_up: info.credentialBackedUp,
    aaguid: info.aaguid,
    name: input.name?.trim() || nameForAaguid(info.aaguid),
    created_at: now,
    last_used_at: null,
  };
  return ctx.db.transaction().execute(async (trx) => {
    await lockSignInMethods(trx, session.userId);
    if ((await countPasskeys(trx, scope, session.userId)) >= MAX_PASSKEYS_PER_USER)
      throw new HttpProblem(
        'conflict',
        `You have ${MAX_PASSKEYS_PER_USER} passkeys, the most one account may have: remove one first.`,
      );
    if (!(await insertPasskey(trx, scope, row)))
      throw new HttpProblem('conflict', 'This passkey is registered already.');
    await recordAudit(trx, origin, {
      action: 'passkey.create',
      tenantId: scope.tenantId,
      targetType: 'passkey',
      targetId: row.id,
      metadata: { name: row.name, aaguid: row.aaguid, backupEligible: row.backup_eligible },
    });
    return toPasskeyRecord(row, handle);
  });
}

export async function listPasskeys(
  ctx: AppContext,
  scope: TenantScope,
  session: SessionPrincipal,
  query: PageQuery,
): Promise<Page<PasskeyRecord>> {
  return listPage(
    query,
    'pky',
    (limit, after) => listPasskeyRows(ctx.db, scope, session.userId, limit, after),
    async (rows) => {
      const handle = rows.length > 0 ? await handleOfUser(ctx.db, scope, session.userId) : null;
      return rows.map((row) => toPasskeyRecord(row, handle ?? ''));
    },
    { keyring: ctx.keyring, list: ['passkeys', scope.tenantId, session.userId] },
  );
}

/** Removes one of the session user's passkeys; never the last one while password sign-in is off. */
export async function removePasskey(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  session: SessionPrincipal,
  passkeyId: string,
): Promise<void> {
  if (!isIdOf('pky', passkeyId)) throw notFound('passkey');
  await ctx.db.transaction().execute(async (trx) => {
    await lockSignInMethods(trx, session.userId);
    const removed = await deletePasskeyRow(trx, scope, session.userId, passkeyId);
    if (!removed) throw notFound('passkey');
    if (
      !(await passwordSignInEnabled(trx, scope, session.userId)) &&
      (await countPasskeys(trx, scope, session.userId)) === 0
    )
      throw new HttpProblem(
        'conflict',
        'This is your last passkey and password sign-in is off: turn password sign-in on first, or add another passkey.',
      );
    await recordAudit(trx, origin, {
      action: 'passkey.delete',
      tenantId: scope.tenantId,
      targetType: 'passkey',
      targetId: removed.id,
      metadata: { name: removed.name, aaguid: removed.aaguid },
    });
  });
}

export const getPasswordSignIn = async (
  ctx: AppContext,
  scope: TenantScope,
  session: SessionPrincipal,
): Promise<{ enabled: boolean }> => ({
  enabled: await passwordSignInEnabled(ctx.db, scope, session.userId),
});

/**
 * "Where enabled, passkeys replace password-only flows" (docs/api/passkeys.md): the user turns password
 * sign-in off, only while they hold a passkey to sign in with instead. Turning it off ends their
 * other sessions that began with a password, at once (docs/api/authentication.md): whoever knew the
 * password is signed out with it. The session that turns it off stays, whatever began it.
 */
export async function switchPasswordSignIn(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  session: SessionPrincipal,
  enabled: boolean,
): Promise<{ enabled: boolean }> {
  return ctx.db.transaction().execute(async (trx) => {
    await lockSignInMethods(trx, session.userId);
    const was = await passwordSignInEnabled(trx, scope, session.userId);
    if (!enabled && (await countPasskeys(trx, scope, session.userId)) === 0)
      throw new HttpProblem(
        'conflict',
        'Password sign-in can be turned off only by a user with a passkey: add a passkey first.',
      );
    if (was !== enabled) {
      await setPasswordSignIn(trx, scope, session.userId, enabled);
      const ended = enabled
        ? 0
        : await endUserSessions(trx, scope, session.userId, origin.at, {
            authMethod: 'password',
            exceptSessionId: session.sessionId,
          });
      await recordAudit(trx, origin, {
        action: 'user.password_sign_in.update',
        tenantId: scope.tenantId,
        targetType: 'user',
        targetId: session.userId,
        metadata: { enabled, ...(!enabled && { passwordSessionsEnded: ended }) },
      });
    }
    return { enabled };
  });
}

import type { Kysely } from 'kysely';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import { KEY_MANAGING_ROLES, type Role } from '../access/catalog.js';
import type { SessionPrincipal } from '../access/principal.js';
import type { TenantScope } from '../access/scope.js';
import type { AppContext } from '../context.js';
import { isIdOf } from '../crypto/ids.js';
import type { DB } from '../db/schema.js';
import { listPage, type Page, type PageQuery } from '../http/pagination.js';
import { HttpProblem, notFound } from '../http/problem.js';
import { isoOrNull } from '../http/schemas.js';
import { createUserWith, isEmailActive, normalizeEmail, ownTenant } from '../tenants/tenants.js';
import { deleteUser, setUserRole } from '../tenants/users.js';
import { checkRoomForLink, issueInvitation, type NewInvitation } from './invitations.js';
import type { InvitationMailer } from './mailer.js';
import type { CompanyUser, InvitedUser } from './schemas.js';
import {
  deleteInvitationRows,
  findPersonRow,
  listPersonRows,
  lockActiveManagers,
  lockPasskeysOf,
  lockPersonRow,
  type PersonRow,
} from './store.js';

const toCompanyUser = (row: PersonRow): CompanyUser => ({
  id: row.id,
  email: row.email,
  role: row.role,
  status: row.status,
  createdAt: new Date(row.created_at).toISOString(),
  lastSignInAt: isoOrNull(row.last_sign_in_at),
  passkeys: row.passkeys,
  passwordSignIn: row.password_sign_in_enabled,
});

const managesKeys = (role: Role): boolean => KEY_MANAGING_ROLES.includes(role);

const onlyPlatformAdmins = (what: string): HttpProblem =>
  new HttpProblem('role_forbidden', `Only a PLATFORM_ADMIN may ${what} a PLATFORM_ADMIN.`);

const lastManager = (what: string): HttpProblem =>
  new HttpProblem(
    'conflict',
    `This is the tenant's last active person who can manage keys and people: ${what} would leave ` +
      'nobody to do it. Give someone else one of the roles COMPANY_IT_ADMIN, EXECUTIVE or ' +
      'PLATFORM_ADMIN first.',
  );

export interface PeopleDeps {
  ctx: AppContext;
  mailer: InvitationMailer;
}

export function listPeople(
  ctx: AppContext,
  scope: TenantScope,
  query: PageQuery,
): Promise<Page<CompanyUser>> {
  return listPage(
    query,
    'usr',
    (limit, after) => listPersonRows(ctx.db, scope, limit, after),
    (rows) => rows.map(toCompanyUser),
    { keyring: ctx.keyring, list: ['people', scope.tenantId] },
  );
}

/**
 * Runs a change to the tenant's people with the tenant's active managers locked (see
 * `lockActiveManagers`): the checks that count them hold when the change commits. The acting
 * person must still be one of them, with the role they have now (not the one their request
 * started with), or the change is refused as their role would be at the gate. `first` locks, before
 * any user row, what other transactions lock before their user's row (a removal: the person's
 * passkeys, see `lockPasskeysOf`), so that the two wait for each other instead of deadlocking.
 */
function underPeopleLock<T>(
  ctx: AppContext,
  scope: TenantScope,
  actor: SessionPrincipal,
  change: (trx: Kysely<DB>, lock: { managers: { id: string; role: Role }[]; actorRole: Role }) => Promise<T>,
  first?: (trx: Kysely<DB>) => Promise<void>,
): Promise<T> {
  return ctx.db.transaction().execute(async (trx) => {
    if (first) await first(trx);
    const managers = await lockActiveManagers(trx, scope);
    const me = managers.find((m) => m.id === actor.userId);
    if (!me) throw new HttpProblem('role_forbidden', 'Your role does not let you manage people any more.');
    return change(trx, { managers, actorRole: me.role });
  });
}

/**
 * The invited person and their one link, answered once the transaction that made them committed;
 * the link is e-mailed then too (in the background) when SMTP_URL is set.
 */
async function answerInvitation(
  deps: PeopleDeps,
  scope: TenantScope,
  actor: SessionPrincipal,
  made: { person: PersonRow; invitation: NewInvitation },
): Promise<InvitedUser> {
  const { person, invitation } = made;
  const tenant = await ownTenant(deps.ctx, scope);
  deps.mailer.send({
    userId: person.id,
    to: person.email,
    tenantName: tenant.name,
    role: person.role,
    invitedBy: actor.email,
    url: invitation.url,
    expiresAt: invitation.expiresAt,
  });
  return {
    ...toCompanyUser(person),
    invitation: { url: invitation.url, expiresAt: invitation.expiresAt.toISOString() },
  };
}

/** The person as the transaction that changed them sees them. */
async function personIn(trx: Kysely<DB>, scope: TenantScope, userId: string): Promise<PersonRow> {
  const row = await findPersonRow(trx, scope, userId);
  if (!row) throw notFound('user');
  return row;
}

/**
 * Invites a person: a user of the tenant, `invited` and without a password, and a link (7 days,
 * single use) shown once in the answer and e-mailed when SMTP_URL is set. The invitation reserves
 * nothing: other tenants may invite the address too, and the first link accepted makes the user. An
 * address an active user holds (in any tenant), or that this tenant has invited already, is a 409,
 * and so is a 101st pending invitation; too many links within the hour are a 429 (`checkRoomForLink`).
 * Only a PLATFORM_ADMIN invites a PLATFORM_ADMIN.
 */
export async function invitePerson(
  deps: PeopleDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  actor: SessionPrincipal,
  input: { email: string; role: Role },
): Promise<InvitedUser> {
  const { ctx } = deps;
  if (input.role === 'PLATFORM_ADMIN' && actor.role !== 'PLATFORM_ADMIN') throw onlyPlatformAdmins('invite');
  const made = await underPeopleLock(ctx, scope, actor, async (trx, { actorRole }) => {
    if (input.role === 'PLATFORM_ADMIN' && actorRole !== 'PLATFORM_ADMIN') throw onlyPlatformAdmins('invite');
    await checkRoomForLink(trx, scope, normalizeEmail(input.email), origin.at);
    const user = await createUserWith(trx, scope, origin, {
      email: input.email,
      role: input.role,
      passwordHash: null,
      status: 'invited',
    });
    const invitation = await issueInvitation(
      trx,
      ctx.keyring,
      ctx.config.publicUrl.origin,
      scope,
      { userId: user.id, email: user.email },
      origin.at,
    );
    await recordAudit(trx, origin, {
      action: 'user.invite',
      tenantId: scope.tenantId,
      targetType: 'user',
      targetId: user.id,
      metadata: { email: user.email, role: user.role, expiresAt: invitation.expiresAt.toISOString() },
    });
    return { person: await personIn(trx, scope, user.id), invitation };
  });
  return answerInvitation(deps, scope, actor, made);
}

/**
 * A new link for a person who has not accepted yet; the link made before stops working. A person
 * who has accepted is a 409: they sign in, or reset nothing here.
 */
export async function reinvitePerson(
  deps: PeopleDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  actor: SessionPrincipal,
  userId: string,
): Promise<InvitedUser> {
  const { ctx } = deps;
  if (!isIdOf('usr', userId)) throw notFound('user');
  const made = await underPeopleLock(ctx, scope, actor, async (trx, { actorRole }) => {
    const target = await lockPersonRow(trx, scope, userId);
    if (!target) throw notFound('user');
    if (target.role === 'PLATFORM_ADMIN' && actorRole !== 'PLATFORM_ADMIN')
      throw onlyPlatformAdmins('invite');
    if (target.status !== 'invited')
      throw new HttpProblem('conflict', 'This person has accepted their invitation already.');
    // A link nobody could accept is no link: the address is an active user's by now (another
    // tenant's invitation accepted first, or a user the platform made). Says whose no more than
    // an invitation's 409 does.
    if (await isEmailActive(trx, target.email))
      throw new HttpProblem('conflict', 'A user with this e-mail address already exists.');
    await checkRoomForLink(trx, scope, target.email, origin.at, userId);
    const issued = await issueInvitation(
      trx,
      ctx.keyring,
      ctx.config.publicUrl.origin,
      scope,
      { userId, email: target.email },
      origin.at,
    );
    await recordAudit(trx, origin, {
      action: 'user.invite',
      tenantId: scope.tenantId,
      targetType: 'user',
      targetId: userId,
      metadata: {
        email: target.email,
        role: target.role,
        expiresAt: issued.expiresAt.toISOString(),
        again: true,
      },
    });
    return { person: await personIn(trx, scope, userId), invitation: issued };
  });
  return answerInvitation(deps, scope, actor, made);
}

/**
 * Gives a person another role. Only a PLATFORM_ADMIN makes a PLATFORM_ADMIN or changes one's role;
 * the tenant's last active person who can manage keys keeps such a role (409). The person's
 * sessions carry the new role from their next request: every request reads it. An invited person
 * made a PLATFORM_ADMIN loses their link, which another key manager may hold.
 */
export async function changeRole(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  actor: SessionPrincipal,
  userId: string,
  role: Role,
): Promise<CompanyUser> {
  if (role === 'PLATFORM_ADMIN' && actor.role !== 'PLATFORM_ADMIN') throw onlyPlatformAdmins('make');
  if (!isIdOf('usr', userId)) throw notFound('user');
  const changed = await underPeopleLock(ctx, scope, actor, async (trx, { managers, actorRole }) => {
    const target = await lockPersonRow(trx, scope, userId);
    if (!target) throw notFound('user');
    if (target.role === role) return personIn(trx, scope, userId);
    if (actorRole !== 'PLATFORM_ADMIN' && (role === 'PLATFORM_ADMIN' || target.role === 'PLATFORM_ADMIN'))
      throw onlyPlatformAdmins(role === 'PLATFORM_ADMIN' ? 'make' : 'change the role of');
    const demoted = target.status === 'active' && managesKeys(target.role) && !managesKeys(role);
    if (demoted && managers.every((m) => m.id === target.id)) throw lastManager('a role without it');
    await setUserRole(trx, scope, userId, role);
    // Whoever holds the link of an invited person signs in with their role: a link made by any key
    // manager must not become a PLATFORM_ADMIN's. A PLATFORM_ADMIN makes them a new one.
    const linkEnded = target.status === 'invited' && role === 'PLATFORM_ADMIN';
    if (linkEnded) await deleteInvitationRows(trx, scope, userId);
    await recordAudit(trx, origin, {
      action: 'user.role.update',
      tenantId: scope.tenantId,
      targetType: 'user',
      targetId: userId,
      metadata: { email: target.email, before: target.role, after: role, ...(linkEnded && { linkEnded }) },
    });
    return personIn(trx, scope, userId);
  });
  return toCompanyUser(changed);
}

/**
 * Removes a person: their user, sessions (ended at once: every request reads its session from the
 * database), passkeys and invitation. Not the tenant's last active person who can manage keys (409);
 * only a PLATFORM_ADMIN removes a PLATFORM_ADMIN.
 */
export async function removePerson(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  actor: SessionPrincipal,
  userId: string,
): Promise<void> {
  if (!isIdOf('usr', userId)) throw notFound('user');
  const passkeysFirst = (trx: Kysely<DB>) => lockPasskeysOf(trx, scope, userId);
  await underPeopleLock(
    ctx,
    scope,
    actor,
    async (trx, { managers, actorRole }) => {
      const target = await lockPersonRow(trx, scope, userId);
      if (!target) throw notFound('user');
      if (target.role === 'PLATFORM_ADMIN' && actorRole !== 'PLATFORM_ADMIN')
        throw onlyPlatformAdmins('remove');
      const manager = target.status === 'active' && managesKeys(target.role);
      if (manager && managers.every((m) => m.id === target.id)) throw lastManager('removing them');
      await deleteUser(trx, scope, userId);
      await recordAudit(trx, origin, {
        action: 'user.delete',
        tenantId: scope.tenantId,
        targetType: 'user',
        targetId: userId,
        metadata: { email: target.email, role: target.role, status: target.status },
      });
    },
    passkeysFirst,
  );
}

/**
 * Removes a person of the tenant on the platform operator's word (docs/api/platform.md): an active
 * person (their sessions end at once, their passkeys go) or an invited one (their link dies). The
 * operator stands above the tenant's own rules: no role is needed, and the tenant's last manager may
 * go too (the operator makes another with `POST …/tenants/:id/users`). Audited as `user.delete` in
 * the tenant's log, with the platform key as its actor. The same lock order as a tenant's removal.
 */
export async function removePersonByOperator(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  userId: string,
): Promise<void> {
  if (!isIdOf('usr', userId)) throw notFound('user');
  await ctx.db.transaction().execute(async (trx) => {
    await lockPasskeysOf(trx, scope, userId);
    await lockActiveManagers(trx, scope);
    const target = await lockPersonRow(trx, scope, userId);
    if (!target) throw notFound('user');
    await deleteUser(trx, scope, userId);
    await recordAudit(trx, origin, {
      action: 'user.delete',
      tenantId: scope.tenantId,
      targetType: 'user',
      targetId: userId,
      metadata: { email: target.email, role: target.role, status: target.status },
    });
  });
}

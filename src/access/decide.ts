import { HttpProblem } from '../http/problem.js';
import { KEY_MANAGING_ROLES, levelRank, parseScope, roleLevel } from './catalog.js';
import type { PortalPrincipal, Principal } from './principal.js';
import { PORTAL_ACCESS, scopeOf, type AccessRule, type PortalAccess, type Requirement } from './rules.js';

/** True when one of the key's scopes reaches the requirement (a higher level includes lower ones). */
function scopesReach(scopes: string[], requirement: Requirement): boolean {
  return scopes.some((scope) => {
    const parsed = parseScope(scope);
    return parsed?.module === requirement.module && levelRank(parsed.level) >= levelRank(requirement.level);
  });
}

export type Decision = { allowed: true; via: Requirement | null } | { allowed: false; problem: HttpProblem };

const deny = (problem: HttpProblem): Decision => ({ allowed: false, problem });

/**
 * Whether an authenticated principal may call a route with this rule, as docs/api/errors.md orders the
 * checks after CSRF: credential kind vs route class → entitlement → scope or role. Pure, so the gate
 * and the capabilities answer share it and cannot disagree.
 */
export function decide(rule: AccessRule, principal: Principal): Decision {
  if (principal.kind === 'portal') return decidePortal(rule, principal);
  switch (rule.class) {
    case 'public':
      return { allowed: true, via: null };
    case 'portal':
      return deny(new HttpProblem('route_not_allowed', 'This route is for portal sessions.'));
    case 'platform':
      return principal.kind === 'platform_key'
        ? { allowed: true, via: null }
        : deny(
            new HttpProblem('platform_key_required', 'This route is for platform operators with a plt_ key.'),
          );
    default:
      break;
  }
  if (principal.kind === 'platform_key') {
    return deny(new HttpProblem('route_not_allowed', 'Platform keys are valid only on platform routes.'));
  }
  if (rule.class === 'key_management') {
    if (principal.kind === 'tenant_key') {
      return deny(
        new HttpProblem('interactive_session_required', 'Key management needs an interactive sign-in.'),
      );
    }
    return KEY_MANAGING_ROLES.includes(principal.role)
      ? { allowed: true, via: null }
      : deny(new HttpProblem('role_forbidden', `The role ${principal.role} cannot manage keys.`));
  }
  if (rule.class === 'session') {
    if (principal.kind === 'tenant_key') {
      return deny(new HttpProblem('route_not_allowed', 'This route is not on the automation allowlist.'));
    }
    return !rule.roles || rule.roles.includes(principal.role)
      ? { allowed: true, via: null }
      : deny(new HttpProblem('role_forbidden', `The role ${principal.role} may not do this.`));
  }

  const kindRefused = refusedKind(rule, principal);
  if (kindRefused) return deny(kindRefused);
  const entitled = rule.anyOf.filter((r) => principal.entitlements.includes(r.module));
  if (entitled.length === 0) {
    const modules = [...new Set(rule.anyOf.map((r) => r.module))].join(' or ');
    return deny(new HttpProblem('entitlement_missing', `The tenant is not entitled to ${modules}.`));
  }
  const needed = () => rule.anyOf.map(scopeOf).join(' or ');
  if (principal.kind === 'tenant_key') {
    const via = entitled.find((r) => scopesReach(principal.scopes, r));
    return via
      ? { allowed: true, via }
      : deny(new HttpProblem('insufficient_scope', `This route needs the scope ${needed()}.`));
  }
  const level = roleLevel(principal.role);
  const via = entitled.find((r) => levelRank(level) >= levelRank(r.level));
  return via
    ? { allowed: true, via }
    : deny(new HttpProblem('role_forbidden', `The role ${principal.role} does not reach ${needed()}.`));
}

/** A tenant route closed to the caller's kind of credential: keys off the allowlist, sessions on keys-only. */
function refusedKind(
  rule: Extract<AccessRule, { class: 'tenant' }>,
  principal: Principal,
): HttpProblem | undefined {
  if (principal.kind === 'session' && rule.keysOnly) {
    return new HttpProblem('route_not_allowed', 'This route is for tenant keys (tnt_) only.');
  }
  if (principal.kind === 'tenant_key' && !rule.automation) {
    return new HttpProblem('route_not_allowed', 'This route is not on the automation allowlist.');
  }
  return undefined;
}

const reaches = (access: PortalAccess, needed: PortalAccess): boolean =>
  PORTAL_ACCESS.indexOf(access) >= PORTAL_ACCESS.indexOf(needed);

/**
 * A portal token: only the routes whose rule names a portal access its session reaches, and of
 * those only what the tenant is entitled to (docs/api/portal.md); every other route is not for it.
 */
function decidePortal(rule: AccessRule, principal: PortalPrincipal): Decision {
  if (rule.class === 'public' || rule.class === 'portal') return { allowed: true, via: null };
  if (rule.class === 'platform') {
    return deny(
      new HttpProblem('platform_key_required', 'This route is for platform operators with a plt_ key.'),
    );
  }
  const notAllowed = deny(new HttpProblem('route_not_allowed', 'This route is not open to portal sessions.'));
  if (rule.class !== 'tenant' && rule.class !== 'session') return notAllowed;
  if (!rule.portal) return notAllowed;
  if (!reaches(principal.access, rule.portal)) {
    return deny(
      new HttpProblem('route_not_allowed', `This route needs a portal session with ${rule.portal} access.`),
    );
  }
  if (rule.class === 'session') return { allowed: true, via: null };
  const via = rule.anyOf.find((r) => principal.entitlements.includes(r.module));
  if (!via) {
    const modules = [...new Set(rule.anyOf.map((r) => r.module))].join(' or ');
    return deny(new HttpProblem('entitlement_missing', `The tenant is not entitled to ${modules}.`));
  }
  return { allowed: true, via };
}

/** The scopes of a key that its tenant's entitlements make usable now. */
export function effectiveScopes(scopes: string[], entitlements: string[]): string[] {
  return scopes.filter((scope) => {
    const parsed = parseScope(scope);
    return parsed !== undefined && entitlements.includes(parsed.module);
  });
}

// How times, counts, roles, modules and scopes read on screen: plain functions, apart from the elements of
// format.tsx (which re-exports them) so that unit tests load them without a DOM.
const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const precise = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

export const formatDate = (iso: string): string => absolute.format(new Date(iso));
export const formatPreciseDate = (iso: string): string => precise.format(new Date(iso));

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

/** "3 minutes ago", "in 89 days". */
export function formatRelative(iso: string, now = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'second') {
      return relative.format(Math.round(seconds / size), unit);
    }
  }
  return relative.format(0, 'second');
}

export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** `integration_hub` → "Integration hub". */
const MODULE_NAMES: Record<string, string> = {
  integrations: 'Integrations',
  integration_hub: 'Integration hub',
};
export const moduleName = (key: string): string => MODULE_NAMES[key] ?? key;

/** The modules a tenant can be entitled to and the roles a user can have (docs/api/authentication.md). */
export const MODULES = ['integrations', 'integration_hub'] as const;
export const ROLES = ['COMPANY_IT_ADMIN', 'EXECUTIVE', 'PLATFORM_ADMIN', 'MEMBER'] as const;

const ROLE_NAMES: Record<string, string> = {
  COMPANY_IT_ADMIN: 'Company IT admin',
  EXECUTIVE: 'Executive',
  PLATFORM_ADMIN: 'Platform admin',
  MEMBER: 'Member',
};
export const roleName = (role: string): string => ROLE_NAMES[role] ?? role;

export const LEVEL_NAMES: Record<string, string> = {
  READER: 'Read',
  OPERATOR: 'Operate',
  ADMIN: 'Administer',
};

/** "24 hours", "30 minutes": how long an overlap of old and new credentials lasts. */
export function overlapText(seconds: number): string {
  const hours = seconds / 3600;
  if (Number.isInteger(hours)) return hours === 1 ? '1 hour' : `${hours} hours`;
  const minutes = Math.round(seconds / 60);
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}

/**
 * When something is due (a retry, a first attempt): "in 4 seconds", or "shortly" once it is less than 5
 * seconds away or already past.
 */
export const dueText = (iso: string, now = Date.now()): string =>
  new Date(iso).getTime() - now < 5000 ? 'shortly' : formatRelative(iso, now);

/** `integrations:READER` → "Integrations · Read". */
export function scopeName(scope: string): string {
  const [module = scope, level] = scope.split(':');
  return level ? `${moduleName(module)} · ${LEVEL_NAMES[level] ?? level}` : scope;
}

/** Scopes grouped by module, in one line: "Integrations: Read, Operate". */
export function scopeSummary(scopes: readonly string[]): string {
  const byModule = new Map<string, string[]>();
  for (const scope of scopes) {
    const [module = scope, level = ''] = scope.split(':');
    byModule.set(module, [...(byModule.get(module) ?? []), LEVEL_NAMES[level] ?? level]);
  }
  return [...byModule].map(([module, levels]) => `${moduleName(module)}: ${levels.join(', ')}`).join('; ');
}

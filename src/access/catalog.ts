import { MODULE_KEYS, type ModuleKey, type Role } from '../db/schema.js';

/** The fixed vocabulary of docs/api/authentication.md: modules, levels (ordered) and roles. */
export { MODULE_KEYS, type ModuleKey, ROLES, type Role } from '../db/schema.js';

export const LEVELS = ['READER', 'OPERATOR', 'ADMIN'] as const;
export type Level = (typeof LEVELS)[number];

/** Roles with ADMIN level on every entitled module and key management (docs/api/authentication.md). */
export const KEY_MANAGING_ROLES: readonly Role[] = ['COMPANY_IT_ADMIN', 'EXECUTIVE', 'PLATFORM_ADMIN'];

/** Every scope a key can hold, `<module>:<LEVEL>`. */
export const SCOPES = MODULE_KEYS.flatMap((module) => LEVELS.map((level) => `${module}:${level}` as const));

export const levelRank = (level: Level): number => LEVELS.indexOf(level);

/** The level a role has on every module its tenant is entitled to. */
export const roleLevel = (role: Role): Level => (KEY_MANAGING_ROLES.includes(role) ? 'ADMIN' : 'READER');

export const isModuleKey = (value: string): value is ModuleKey =>
  (MODULE_KEYS as readonly string[]).includes(value);
export const isLevel = (value: string): value is Level => (LEVELS as readonly string[]).includes(value);

/** Parses `module:LEVEL`; undefined when either part is unknown. */
export function parseScope(scope: string): { module: ModuleKey; level: Level } | undefined {
  const [module, level, ...rest] = scope.split(':');
  if (rest.length > 0 || !module || !level || !isModuleKey(module) || !isLevel(level)) return undefined;
  return { module, level };
}

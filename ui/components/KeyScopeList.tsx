import { LEVEL_NAMES, moduleName } from '../format.js';

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

/** A key's scopes, one per line, in words. */
export function KeyScopeList({ scopes }: { scopes: readonly string[] }) {
  if (scopes.length === 0) return <span class="muted">None</span>;
  return (
    <ul class="key-scopes">
      {scopes.map((scope) => (
        <li key={scope}>{scopeName(scope)}</li>
      ))}
    </ul>
  );
}

// A key's scopes: listed in words, and chosen as checkboxes per module (modules the organization is
// not entitled to shown switched off, with the reason).
import { useId } from 'preact/hooks';
import { LEVEL_NAMES, moduleName, scopeName } from '../common/format.js';
import type { AllowedScopesAnswer } from '../common/routes.js';

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

/** What each level lets a key do, per module (docs/api/authentication.md: the routes each scope opens). */
const LEVEL_HELP: Record<string, Record<string, string>> = {
  integrations: {
    READER: 'Reads connections and their event logs.',
    OPERATOR: 'Also creates and revokes connections, publishes events and retries deliveries.',
    ADMIN: 'Also binds credentials to connections.',
  },
  integration_hub: {
    READER: 'Reads the hub overview and credential readiness.',
    OPERATOR: 'Includes Read. No hub route needs more than Read today.',
    ADMIN: 'Includes Operate. No hub route needs more than Read today.',
  },
};
const GENERIC_HELP: Record<string, string> = {
  READER: 'Reads.',
  OPERATOR: 'Also makes changes.',
  ADMIN: 'Also binds credentials.',
};

type Module = AllowedScopesAnswer['modules'][number];

function ModuleScopes({
  module,
  selected,
  onToggle,
  describedBy,
}: {
  module: Module;
  selected: ReadonlySet<string>;
  onToggle: (scope: string, on: boolean) => void;
  describedBy: string | undefined;
}) {
  const id = useId();
  const reasonId = `${id}-reason`;
  return (
    <fieldset
      class={module.entitled ? 'key-module' : 'key-module key-module-off'}
      disabled={!module.entitled}
      aria-describedby={module.entitled ? undefined : reasonId}
    >
      <legend>{moduleName(module.moduleKey)}</legend>
      {module.entitled ? null : (
        <p class="key-module-reason" id={reasonId}>
          Not available: your organization is not entitled to {moduleName(module.moduleKey)}. Ask your
          platform operator to enable it.
        </p>
      )}
      {module.levels.map((level) => {
        const scope = `${module.moduleKey}:${level}`;
        const boxId = `${id}-${level}`;
        const helpId = `${boxId}-help`;
        return (
          <div class="check key-choice key-level" key={level}>
            <input
              id={boxId}
              type="checkbox"
              name="scopes"
              value={scope}
              checked={selected.has(scope)}
              aria-describedby={[helpId, describedBy].filter(Boolean).join(' ')}
              onChange={(event) => onToggle(scope, event.currentTarget.checked)}
            />
            <div>
              <label for={boxId}>{LEVEL_NAMES[level] ?? level}</label>
              <p class="key-level-help" id={helpId}>
                {LEVEL_HELP[module.moduleKey]?.[level] ?? GENERIC_HELP[level] ?? ''}
              </p>
            </div>
          </div>
        );
      })}
    </fieldset>
  );
}

/**
 * The scopes of a new key as checkboxes, one group per module; modules the organization is not
 * entitled to are shown switched off, with the reason.
 */
export function KeyScopePicker({
  modules,
  selected,
  onChange,
  error,
}: {
  modules: AllowedScopesAnswer['modules'];
  selected: ReadonlySet<string>;
  onChange: (next: Set<string>) => void;
  error?: string;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = error ? `${id}-error` : undefined;
  const toggle = (scope: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(scope);
    else next.delete(scope);
    onChange(next);
  };
  return (
    <fieldset class={error ? 'key-scope-picker field-invalid' : 'key-scope-picker'}>
      <legend>Scopes</legend>
      <p class="field-hint" id={hintId}>
        What the key may do. A higher level includes the lower ones: choose the least its job needs.
      </p>
      <div class="key-modules">
        {modules.map((module) => (
          <ModuleScopes
            key={module.moduleKey}
            module={module}
            selected={selected}
            onToggle={toggle}
            describedBy={errorId}
          />
        ))}
      </div>
      {error ? (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

import { moduleName } from '../../format.js';
import { MODULES } from './PlatformTypes.js';

/** The modules a tenant is entitled to, as checkboxes (contract §4). */
export function TenantModulePicker({
  selected,
  onChange,
  error,
}: {
  selected: Set<string>;
  onChange: (next: Set<string>) => void;
  error?: string;
}) {
  return (
    <fieldset class={error ? 'field-invalid' : undefined}>
      <legend>Modules</legend>
      {MODULES.map((module) => (
        <label class="check" key={module}>
          <input
            type="checkbox"
            name="entitlements"
            value={module}
            checked={selected.has(module)}
            onChange={(event) => {
              const next = new Set(selected);
              if (event.currentTarget.checked) next.add(module);
              else next.delete(module);
              onChange(next);
            }}
          />
          {moduleName(module)}
        </label>
      ))}
      {error ? <p class="field-error">{error}</p> : null}
    </fieldset>
  );
}

/** In the order of the catalog, whatever order they were ticked in. */
export const orderedModules = (selected: Set<string>): string[] => MODULES.filter((m) => selected.has(m));

import type { Overview } from '../api-types.js';
import { moduleName } from '../format.js';
import { StatusBadge } from './StatusBadge.js';

/** The modules, each entitled or not. */
export function OverviewModules({ overview }: { overview: Overview }) {
  return (
    <section class="card" aria-labelledby="modules-title">
      <h2 id="modules-title">Modules</h2>
      <ul class="plain-list">
        {overview.modules.map((m) => (
          <li key={m.moduleKey} class="row-between">
            <span>{moduleName(m.moduleKey)}</span>
            <StatusBadge
              status={m.entitled ? 'active' : 'disabled'}
              label={m.entitled ? 'Entitled' : 'Not entitled'}
            />
          </li>
        ))}
      </ul>
    </section>
  );
}

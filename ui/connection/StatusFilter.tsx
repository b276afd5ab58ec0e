import type { DeliveryStatus } from '../api-types.js';
import { DELIVERY_STATUS_WORDS, DELIVERY_STATUSES } from '../components/deliveryLog.js';

/**
 * The status filter: one status from a list (the common case, one step), or several, ticked one by
 * one once "Several statuses…" is chosen.
 */
export function StatusFilter({
  id,
  status,
  onStatus,
  several,
  onSeveral,
}: {
  id: string;
  status: DeliveryStatus[];
  onStatus: (status: DeliveryStatus[]) => void;
  several: boolean;
  onSeveral: (several: boolean) => void;
}) {
  const value = several ? 'several' : (status[0] ?? '');
  return (
    <div class="field filter-status">
      <label for={id}>Status</label>
      <select
        id={id}
        value={value}
        onChange={(event) => {
          const chosen = event.currentTarget.value;
          onSeveral(chosen === 'several');
          if (chosen !== 'several') onStatus(chosen ? [chosen as DeliveryStatus] : []);
        }}
      >
        <option value="">All statuses</option>
        {DELIVERY_STATUSES.map((s) => (
          <option key={s} value={s}>
            {DELIVERY_STATUS_WORDS[s]}
          </option>
        ))}
        <option value="several">Several statuses…</option>
      </select>
    </div>
  );
}

/** Each status as a checkbox, for "Several statuses…". */
export function StatusChecks({
  status,
  onStatus,
}: {
  status: DeliveryStatus[];
  onStatus: (status: DeliveryStatus[]) => void;
}) {
  return (
    <fieldset class="status-checks">
      <legend class="visually-hidden">Statuses shown</legend>
      {DELIVERY_STATUSES.map((s) => (
        <label key={s} class="status-check">
          <input
            type="checkbox"
            checked={status.includes(s)}
            onChange={(event) => {
              const on = event.currentTarget.checked;
              onStatus(DELIVERY_STATUSES.filter((x) => (x === s ? on : status.includes(x))));
            }}
          />
          {DELIVERY_STATUS_WORDS[s]}
        </label>
      ))}
    </fieldset>
  );
}

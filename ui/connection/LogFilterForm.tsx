import { useId, useState } from 'preact/hooks';
import { Field } from '../components/Field.js';
import { filterQuery, hasFilters, NO_FILTERS, type LogFilters } from './logFilters.js';
import { ResponseFilter } from './ResponseFilter.js';
import { StatusChecks, StatusFilter } from './StatusFilter.js';
import { fromLocalInput, timeZoneName, toLocalInput } from './times.js';
import { useFilterDraft, type FilterDraft } from './useFilterDraft.js';

/** A text or time filter: applied with the form. */
function TextFilter({
  label,
  value,
  onInput,
  type = 'text',
  placeholder,
  mono,
  error,
}: {
  label: string;
  value: string;
  onInput: (value: string) => void;
  type?: 'text' | 'datetime-local';
  placeholder?: string;
  mono?: boolean;
  error?: string;
}) {
  return (
    <Field label={label} error={error}>
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          type={type as 'text'}
          class={mono ? 'mono' : undefined}
          value={value}
          placeholder={placeholder}
          autoComplete="off"
          spellcheck={false}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}

function TestFilter({ form }: { form: FilterDraft }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>Test events</label>
      <select
        id={id}
        value={form.draft.test}
        onChange={(event) => form.choose({ test: event.currentTarget.value as LogFilters['test'] })}
      >
        <option value="">Shown</option>
        <option value="true">Only test events</option>
        <option value="false">Hidden</option>
      </select>
    </div>
  );
}

function FilterFields({ form }: { form: FilterDraft }) {
  const { draft, edit } = form;
  const ids = useId();
  return (
    <div class="filter-grid">
      <StatusFilter
        id={`${ids}-status`}
        status={draft.status}
        onStatus={(status) => form.choose({ status })}
        several={form.several}
        onSeveral={form.setSeveral}
      />
      <TextFilter
        label="Event type"
        mono
        placeholder="employee.*"
        value={draft.eventType}
        error={form.problems.eventType}
        onInput={(eventType) => edit({ eventType })}
      />
      <TextFilter
        label="Event ID"
        mono
        placeholder="evt_…"
        value={draft.eventId}
        error={form.problems.eventId}
        onInput={(eventId) => edit({ eventId })}
      />
      <ResponseFilter
        id={`${ids}-response`}
        value={draft.responseStatus}
        error={form.problems.responseStatus ?? null}
        onValue={(responseStatus) => edit({ responseStatus })}
        onChoose={(responseStatus) => form.choose({ responseStatus })}
      />
      <TestFilter form={form} />
      <TextFilter
        label="Created from"
        type="datetime-local"
        value={toLocalInput(draft.since)}
        onInput={(value) => edit({ since: fromLocalInput(value) })}
      />
      <TextFilter
        label="Created before"
        type="datetime-local"
        value={toLocalInput(draft.until)}
        error={form.problems.until}
        onInput={(value) => edit({ until: fromLocalInput(value) })}
      />
    </div>
  );
}

/** How many filters are on ("status" counts once, however many statuses). */
const activeCount = (filters: LogFilters): number =>
  Object.values(filterQuery(filters)).filter(Boolean).length;

/** Open on a wide screen, or when a filter is on; on a phone, folded until asked for. */
function useFilterPanel(filters: LogFilters) {
  const [open, setOpen] = useState(
    () => hasFilters(filters) || !window.matchMedia('(max-width: 820px)').matches,
  );
  return { open, setOpen };
}

/** The event log's filters (contract §15), kept in the page's URL by `onApply`. */
export function LogFilterForm({
  filters,
  onApply,
}: {
  filters: LogFilters;
  onApply: (filters: LogFilters) => void;
}) {
  const form = useFilterDraft(filters, onApply);
  const panel = useFilterPanel(filters);
  const active = activeCount(filters);
  return (
    <details
      class="filter-panel"
      open={panel.open}
      onToggle={(event) => panel.setOpen(event.currentTarget.open)}
    >
      <summary>
        Filters
        {active > 0 ? <span class="filter-count">{active} on</span> : null}
      </summary>
      <form
        class="log-filters"
        aria-label="Filter deliveries"
        onSubmit={(event) => {
          event.preventDefault();
          form.submit();
        }}
      >
        <FilterFields form={form} />
        {form.several ? (
          <StatusChecks status={form.draft.status} onStatus={(status) => form.choose({ status })} />
        ) : null}
        <div class="filter-actions">
          <span class="field-hint">Times are in {timeZoneName()}.</span>
          {hasFilters(filters) ? (
            <button type="button" class="button button-quiet" onClick={() => form.clear(NO_FILTERS)}>
              Clear filters
            </button>
          ) : null}
          <button type="submit" class={form.changed ? 'button button-primary' : 'button'}>
            Apply filters
          </button>
        </div>
      </form>
    </details>
  );
}

// The event log's filters (docs/api/events.md) as a form: statuses, event type, event ID, time range,
// test or not, the receiver's answer; checked before they are applied to the URL.
import { useEffect, useId, useState } from 'preact/hooks';
import { Field } from '../common/Field.js';
import type { DeliveryStatus } from '../common/routes.js';
import {
  DELIVERY_STATUS_WORDS,
  DELIVERY_STATUSES,
  filterKey,
  filterProblems,
  filterQuery,
  fromLocalInput,
  hasFilters,
  NO_FILTERS,
  RESPONSE_CLASSES,
  timeZoneName,
  toLocalInput,
  type FilterProblems,
  type LogFilters,
} from './log.js';

/**
 * The filter form's values before they are applied: text and times are applied with the form (Enter
 * or "Apply"); a choice from a list is applied at once, with whatever else was typed. `apply` puts
 * them in the page's URL, which is what the log shows.
 */
function useFilterDraft(filters: LogFilters, apply: (filters: LogFilters) => void) {
  const [draft, setDraft] = useState(filters);
  const [several, setSeveral] = useState(filters.status.length > 1);
  const key = filterKey(filters);
  // The URL changed (applied, back button, a link): the form shows what the log shows.
  useEffect(() => {
    setDraft(filters);
    if (filters.status.length > 1) setSeveral(true);
  }, [key]);

  const [problems, setProblems] = useState<FilterProblems>({});
  const applyDraft = (typed: LogFilters) => {
    const next = { ...typed, eventType: typed.eventType.trim(), eventId: typed.eventId.trim() };
    const found = filterProblems(next);
    setProblems(found);
    // What the API would refuse is said on its field, and nothing is applied until it is corrected.
    if (Object.keys(found).length === 0) apply(next);
  };
  const edit = (change: Partial<LogFilters>) => setDraft((current) => ({ ...current, ...change }));
  const choose = (change: Partial<LogFilters>) => applyDraft({ ...draft, ...change });
  const changed = filterKey(draft) !== key;
  const clear = (none: LogFilters) => {
    setSeveral(false);
    setProblems({});
    apply(none);
  };
  const submit = () => applyDraft(draft);
  return { draft, edit, choose, submit, clear, changed, several, setSeveral, problems };
}

type FilterDraft = ReturnType<typeof useFilterDraft>;

/**
 * The status filter: one status from a list (the common case, one step), or several, ticked one by
 * one once "Several statuses…" is chosen.
 */
function StatusFilter({
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
function StatusChecks({
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

const CLASS_WORDS: Record<(typeof RESPONSE_CLASSES)[number], string> = {
  '2xx': '2xx success',
  '4xx': '4xx refused by the receiver',
  '5xx': '5xx receiver error',
};

const isClass = (value: string): boolean => (RESPONSE_CLASSES as readonly string[]).includes(value);

/** An exact status code, typed after choosing "Exact code…". */
function ResponseCode({
  id,
  value,
  onValue,
  error,
}: {
  id: string;
  value: string;
  onValue: (value: string) => void;
  error: string | null;
}) {
  return (
    <input
      type="text"
      inputMode="numeric"
      class="mono code-input"
      aria-label="Response status code"
      aria-invalid={error ? true : undefined}
      aria-describedby={error ? `${id}-error` : undefined}
      pattern="[1-5][0-9][0-9]"
      maxLength={3}
      placeholder="404"
      value={isClass(value) ? '' : value}
      onInput={(event) => onValue(event.currentTarget.value.trim())}
    />
  );
}

/**
 * The last attempt's response status: a class from the list, or one exact code typed after choosing
 * "Exact code…". `value` is what the filter holds (`5xx`, `404`, '').
 */
function ResponseFilter({
  id,
  value,
  onValue,
  onChoose,
  error,
}: {
  id: string;
  /** Why the code typed cannot be applied. */
  error: string | null;
  value: string;
  /** A code typed: applied with the form. */
  onValue: (value: string) => void;
  /** A choice from the list: applied at once. */
  onChoose: (value: string) => void;
}) {
  const [exact, setExact] = useState(value !== '' && !isClass(value));
  useEffect(() => {
    if (value !== '') setExact(!isClass(value));
  }, [value]);
  return (
    <div class="field filter-response">
      <label for={id}>Response</label>
      <div class="filter-response-row">
        <select
          id={id}
          value={exact ? 'code' : value}
          onChange={(event) => {
            const chosen = event.currentTarget.value;
            setExact(chosen === 'code');
            if (chosen !== 'code') onChoose(chosen);
          }}
        >
          <option value="">Any response</option>
          {RESPONSE_CLASSES.map((c) => (
            <option key={c} value={c}>
              {CLASS_WORDS[c]}
            </option>
          ))}
          <option value="code">Exact code…</option>
        </select>
        {exact ? <ResponseCode id={id} value={value} onValue={onValue} error={error} /> : null}
      </div>
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

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

/** The event log's filters (docs/api/events.md), kept in the page's URL by `onApply`. */
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

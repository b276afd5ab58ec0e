// A tenant's quotas in the console (contract §24, docs/api/platform.md): how much of each is in use now
// (events today, connections) as meters, and the form that sets the four (empty: no limit). A 400
// is said beside the field it names. What is in use follows without a reload.
import { useEffect, useId, useState } from 'preact/hooks';
import type { ApiError } from '../../common/api.js';
import { Field } from '../../common/Field.js';
import { useAction, useFocusFirstInvalid, useFollow, useResource } from '../../common/hooks.js';
import { DoneNotice, ErrorNotice, Loading, useDoneNotice } from '../../common/Notice.js';
import { routes, type Quotas, type QuotasAnswer } from '../../common/routes.js';
import { platformApi } from '../key.js';

type QuotaName = keyof Quotas;

/** The four quotas: their names, the range the API takes, and what each limits. */
const QUOTAS: Array<{ name: QuotaName; label: string; max: number | null; hint: string }> = [
  {
    name: 'eventsPerDay',
    label: 'Events per day',
    max: null,
    hint: 'Events the tenant may publish per UTC day; over it, publishing answers 429 until midnight UTC.',
  },
  {
    name: 'connections',
    label: 'Connections',
    max: null,
    hint: 'Connections not revoked; over it, creating one answers 409.',
  },
  {
    name: 'requestsPerMinute',
    label: 'Requests per minute',
    max: 1_000_000,
    hint: 'All of the tenant’s requests together, every credential; 1 to 1,000,000.',
  },
  {
    name: 'retentionDays',
    label: 'Retention in days',
    max: 365,
    hint: 'How long its deliveries are kept, 1 to 365. Empty: the hub’s own retention.',
  },
];

const count = (n: number) => n.toLocaleString('en-US');

type Draft = Record<QuotaName, string>;
const draftOf = (q: Quotas): Draft => ({
  eventsPerDay: q.eventsPerDay === null ? '' : String(q.eventsPerDay),
  connections: q.connections === null ? '' : String(q.connections),
  requestsPerMinute: q.requestsPerMinute === null ? '' : String(q.requestsPerMinute),
  retentionDays: q.retentionDays === null ? '' : String(q.retentionDays),
});

/** What is wrong with a typed quota, in words; undefined when it is fine (empty is no limit). */
function quotaProblem(value: string, max: number | null): string | undefined {
  const text = value.trim();
  if (!text) return undefined;
  const n = Number(text);
  if (/^\d+$/.test(text) && n >= 1 && (max === null || n <= max) && Number.isSafeInteger(n)) return undefined;
  return max === null
    ? 'Enter a whole number of 1 or more, or leave it empty for no limit.'
    : `Enter a whole number from 1 to ${count(max)}, or leave it empty.`;
}

const bodyOf = (draft: Draft): Quotas => ({
  eventsPerDay: draft.eventsPerDay.trim() ? Number(draft.eventsPerDay) : null,
  connections: draft.connections.trim() ? Number(draft.connections) : null,
  requestsPerMinute: draft.requestsPerMinute.trim() ? Number(draft.requestsPerMinute) : null,
  retentionDays: draft.retentionDays.trim() ? Number(draft.retentionDays) : null,
});

/** One quota in use: a meter against its limit, or the count and "no limit". */
function UsageMeter({ label, used, limit }: { label: string; used: number; limit: number | null }) {
  const id = useId();
  const high = limit !== null && used >= 0.8 * limit;
  return (
    <div class="quota-meter">
      <span id={id} class="quota-meter-label">
        {label}
      </span>
      {limit === null ? (
        <span class="quota-meter-value">{count(used)} · no limit</span>
      ) : (
        <>
          <meter
            aria-labelledby={id}
            min={0}
            max={limit}
            low={0.8 * limit}
            high={0.8 * limit}
            optimum={0}
            value={Math.min(used, limit)}
          />
          <span class="quota-meter-value">
            {count(used)} of {count(limit)}
            {used >= limit ? ' · at the limit' : high ? ' · over 80 %' : ''}
          </span>
        </>
      )}
    </div>
  );
}

/** The form's state: a draft of the four quotas (taken from the first answer), checked, then sent. */
function useQuotasForm(
  tenantId: string,
  loaded: QuotasAnswer | undefined,
  onSaved: (q: QuotasAnswer) => void,
) {
  const [draft, setDraft] = useState<Draft | null>(null);
  const [checked, setChecked] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const form = useFocusFirstInvalid(attempt);
  // The draft starts from what is set; later reads (the meters follow) leave what is typed alone.
  useEffect(() => {
    if (loaded && !draft) setDraft(draftOf(loaded));
  }, [loaded, draft]);
  const submit = useAction(async (body: Quotas) => {
    const saved = await platformApi(routes.platform.setQuotas, { params: { id: tenantId }, body });
    setDraft(draftOf(saved));
    setChecked(false);
    onSaved(saved);
  });
  const onSubmit = (event: Event) => {
    event.preventDefault();
    setChecked(true);
    setAttempt((n) => n + 1);
    if (!draft || QUOTAS.some((q) => quotaProblem(draft[q.name], q.max))) return;
    void submit.run(bodyOf(draft));
  };
  return { draft, setDraft, checked, form, submit, onSubmit };
}

/** What to say beside a quota's field: found before sending, or named by the API's 400. */
function fieldError(
  name: QuotaName,
  max: number | null,
  value: string,
  checked: boolean,
  error: ApiError | undefined,
): string | undefined {
  return (checked ? quotaProblem(value, max) : undefined) ?? error?.forField(name);
}

function QuotasForm({ state, onReset }: { state: ReturnType<typeof useQuotasForm>; onReset: () => void }) {
  const { draft, setDraft, checked, submit } = state;
  if (!draft) return null;
  const other = submit.error && submit.error.fieldErrors.length === 0 ? submit.error : undefined;
  return (
    <form class="form quota-form" ref={state.form} noValidate onSubmit={state.onSubmit}>
      <p class="muted">Leave a field empty for no limit.</p>
      {QUOTAS.map((q) => (
        <Field
          key={q.name}
          label={q.label}
          hint={q.hint}
          error={fieldError(q.name, q.max, draft[q.name], checked, submit.error)}
        >
          {({ id, describedBy, invalid }) => (
            <input
              id={id}
              name={q.name}
              type="text"
              inputMode="numeric"
              autoComplete="off"
              class="input-short"
              value={draft[q.name]}
              aria-describedby={describedBy}
              aria-invalid={invalid}
              onInput={(event) => setDraft({ ...draft, [q.name]: event.currentTarget.value })}
            />
          )}
        </Field>
      ))}
      <ErrorNotice error={other} title="The quotas could not be saved." />
      <div class="form-actions">
        <button type="submit" class="button button-primary" disabled={submit.busy} aria-busy={submit.busy}>
          {submit.busy ? 'Saving…' : 'Save quotas'}
        </button>
        <button type="button" class="button" onClick={onReset} disabled={submit.busy}>
          Undo changes
        </button>
      </div>
    </form>
  );
}

/** A tenant's quotas: what is in use against each, and the form that sets them. */
export function QuotasPanel({ tenantId }: { tenantId: string }) {
  const quotas = useResource(
    (signal) => platformApi(routes.platform.quotas, { params: { id: tenantId }, signal }),
    `quotas ${tenantId}`,
  );
  // Events are published and connections made meanwhile: the meters follow.
  useFollow(quotas);
  const { done, setDone, ref, dismiss } = useDoneNotice(tenantId);
  const state = useQuotasForm(tenantId, quotas.data, () => {
    setDone('The quotas are saved. They apply from the next request.');
    quotas.reload();
  });
  const q = quotas.data;
  return (
    <section class="card quota-card" aria-labelledby="quotas-title">
      <h2 id="quotas-title">Quotas</h2>
      {quotas.error && !q ? (
        <ErrorNotice error={quotas.error} title="The quotas could not be loaded." />
      ) : null}
      {!q && !quotas.error ? <Loading what="Loading the quotas" /> : null}
      {q ? (
        <div class="quota-meters">
          <UsageMeter
            label="Events published today (UTC)"
            used={q.usage.eventsToday}
            limit={q.eventsPerDay}
          />
          <UsageMeter label="Connections" used={q.usage.connections} limit={q.connections} />
        </div>
      ) : null}
      <DoneNotice done={done} noticeRef={ref} onDismiss={dismiss} />
      <QuotasForm
        state={state}
        onReset={() => {
          if (q) state.setDraft(draftOf(q));
          state.submit.setError(undefined);
        }}
      />
    </section>
  );
}

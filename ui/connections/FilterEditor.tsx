// A connection's payload filter (docs/api/connections.md): a JSON text area with the API's refusals by
// their place in the filter, and a box that tries the filter on a sample event and says which
// conditions failed (docs/decisions/0058-payload-filters.md).
import { useState } from 'preact/hooks';
import { api } from '../common/api.js';
import { Field } from '../common/Field.js';
import { useAction } from '../common/hooks.js';
import { ErrorNotice } from '../common/Notice.js';
import { routes } from '../common/routes.js';
import { reaches } from '../common/viewer.js';
import { filterErrorText, filterValueOf, jsonProblem } from './filter-text.js';

type FilterTest = Awaited<ReturnType<typeof testFilter>>;
type Failure = FilterTest['failed'][number];

const SAMPLE = '{\n  "type": "order.paid",\n  "data": { "customer": { "tier": "gold" }, "total": 120 }\n}';

function testFilter(filter: unknown, event: { type: string; data: Record<string, unknown> }) {
  const body = { filter: (filter ?? null) as Record<string, unknown> | null, event };
  return api(routes.connections.filterTest, { body });
}

/** One failed condition in words: `data.customer.tier` in ["gold"]: found "silver". */
function FailureLine({ failure }: { failure: Failure }) {
  const operator = failure.operator === 'equals' ? 'equals' : failure.operator;
  const found =
    failure.actualType === 'missing'
      ? 'nothing there'
      : failure.actual !== null || failure.actualType === 'null'
        ? JSON.stringify(failure.actual)
        : `an ${failure.actualType}`;
  return (
    <li>
      <code>{failure.path}</code> {operator} <code>{JSON.stringify(failure.expected)}</code>: found {found}
    </li>
  );
}

function TestResult({ result }: { result: FilterTest }) {
  if (result.matches) {
    return <p class="notice notice-success">The sample event matches: this connection would get it.</p>;
  }
  return (
    <div class="notice notice-warning">
      <p>The sample event does not match: this connection would not get it. Conditions that failed:</p>
      <ul>
        {result.failed.map((failure) => (
          <FailureLine key={failure.filterPath} failure={failure} />
        ))}
      </ul>
    </div>
  );
}

/** The "Test with a sample event" box: a sample event, a button, and the verdict with its reasons. */
function SampleTest({ filterText }: { filterText: string }) {
  const [sample, setSample] = useState(SAMPLE);
  const [result, setResult] = useState<FilterTest | undefined>(undefined);
  const sampleProblem = jsonProblem(sample, 'sample event');
  const test = useAction(async () => {
    setResult(undefined);
    const event = JSON.parse(sample) as { type: string; data: Record<string, unknown> };
    setResult(await testFilter(filterValueOf(filterText), event));
  });
  return (
    <fieldset class="form">
      <legend>Test with a sample event</legend>
      <Field
        label="Sample event"
        hint={
          <>
            An event as you would publish it: <code>type</code> and <code>data</code>.
          </>
        }
        error={sampleProblem}
      >
        {({ id, describedBy, invalid }) => (
          <textarea
            id={id}
            class="mono"
            rows={5}
            spellcheck={false}
            value={sample}
            aria-describedby={describedBy}
            aria-invalid={invalid || undefined}
            onInput={(event) => setSample(event.currentTarget.value)}
          />
        )}
      </Field>
      <div class="form-actions">
        <button
          type="button"
          class="button"
          disabled={test.busy || Boolean(sampleProblem) || jsonProblem(filterText, 'filter') !== undefined}
          aria-busy={test.busy}
          onClick={() => void test.run()}
        >
          {test.busy ? 'Testing…' : 'Test filter'}
        </button>
      </div>
      <div role="status">{result ? <TestResult result={result} /> : null}</div>
      {test.error && filterErrorText(test.error) ? (
        <p class="notice notice-error" role="alert">
          The filter is not valid: {filterErrorText(test.error)}
        </p>
      ) : (
        <ErrorNotice error={test.error} title="The filter could not be tested." />
      )}
    </fieldset>
  );
}

/** The `filter` field of a connector: JSON, checked as typed, with the sample-event test below it. */
export function FilterEditor({
  value,
  onInput,
  error,
}: {
  value: string;
  onInput: (value: string) => void;
  error?: string;
}) {
  const shown = jsonProblem(value, 'filter') ?? error;
  return (
    <div class="form">
      <Field
        label="Payload filter (optional)"
        hint={
          <>
            JSON: only events whose body matches every condition are delivered, e.g.{' '}
            <code>{'{"data.customer.tier": {"in": ["gold"]}, "data.total": {"gte": 100}}'}</code>. Leave empty
            to receive every event of the types above.
          </>
        }
        error={shown}
      >
        {({ id, describedBy, invalid }) => (
          <textarea
            id={id}
            name="filter"
            class="mono"
            rows={5}
            spellcheck={false}
            value={value}
            aria-describedby={describedBy}
            aria-invalid={invalid || undefined}
            onInput={(event) => onInput(event.currentTarget.value)}
          />
        )}
      </Field>
      {/* The portal's token does not reach the filter test (docs/api/portal.md). */}
      {reaches(routes.connections.filterTest) ? <SampleTest filterText={value} /> : null}
    </div>
  );
}

// The tenant's usage page (contract §24, docs/operators/web-ui.md): over a range kept in the URL, a chart of
// the events published, delivered and failed per day (or hour), a table of every bucket with the
// totals, and the same as a CSV download. It follows what happens meanwhile (FOLLOW_MS).
import { useLocation } from 'preact-iso';
import { useId, useMemo } from 'preact/hooks';
import { api, apiText, withQuery } from '../common/api.js';
import { ChartPanel } from '../common/Chart.js';
import { useAction, useFollow, useResource } from '../common/hooks.js';
import { PageHeader } from '../common/Layout.js';
import { ErrorNotice, Loading } from '../common/Notice.js';
import { routes, type UsageBucket } from '../common/routes.js';
import {
  bucketWords,
  count,
  countsOf,
  DEFAULT_RANGE_KEY,
  saveFile,
  sumUsage,
  USAGE_COLUMNS,
  USAGE_RANGES,
  usageQuery,
  usageRange,
  type UsageRange,
} from '../common/usage.js';

/** The chart's sentence: the totals, and the busiest bucket. */
function chartSummary(buckets: UsageBucket[], range: UsageRange): string {
  const total = sumUsage(buckets);
  const unit = range.granularity === 'hour' ? 'hour' : 'day';
  if (total.eventsPublished + total.delivered + total.failed === 0)
    return `${range.words}: no event was published and no delivery ended.`;
  const busiest = buckets.reduce((a, b) => (b.eventsPublished > a.eventsPublished ? b : a));
  return (
    `${range.words}: ${count(total.eventsPublished)} events published, ${count(total.delivered)} delivered, ` +
    `${count(total.failed)} failed. Busiest ${unit}: ${bucketWords(busiest.start, range.granularity)}, ` +
    `${count(busiest.eventsPublished)} events published.`
  );
}

/** Events published, delivered and failed per bucket: three lines told apart by colour and by dash. */
function UsageChart({ buckets, range }: { buckets: UsageBucket[]; range: UsageRange }) {
  const series = useMemo(
    () => ({
      times: buckets.map((b) => Date.parse(b.start) / 1000),
      published: buckets.map((b) => b.eventsPublished),
      delivered: buckets.map((b) => b.deliveries.delivered),
      failed: buckets.map((b) => b.deliveries.failed),
    }),
    [buckets],
  );
  const hourly = range.granularity === 'hour';
  return (
    <ChartPanel
      title={hourly ? 'Events and deliveries per hour' : 'Events and deliveries per day'}
      summary={chartSummary(buckets, range)}
      yLabel={hourly ? 'Per hour' : 'Per day'}
      times={series.times}
      series={[
        { label: 'Published', colour: '--accent', values: series.published },
        { label: 'Delivered', colour: '--good', values: series.delivered, dash: [8, 4] },
        { label: 'Failed', colour: '--bad', values: series.failed, dash: [2, 3] },
      ]}
      format={count}
      whole
      x={
        hourly
          ? { label: 'Hour (UTC)', value: '{YYYY}-{MM}-{DD} {HH}:00', utc: true }
          : { label: 'Day (UTC)', value: '{YYYY}-{MM}-{DD}', utc: true, days: true }
      }
    />
  );
}

/** Every bucket of the range, newest first, with the totals in the table's foot. */
function UsageTable({ buckets, range }: { buckets: UsageBucket[]; range: UsageRange }) {
  const id = useId();
  const total = sumUsage(buckets);
  const unit = range.granularity === 'hour' ? 'Hour (UTC)' : 'Day (UTC)';
  return (
    <section class="card usage-table-card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{range.granularity === 'hour' ? 'Every hour' : 'Every day'}</h2>
      <div class="table-wrap" tabIndex={0} role="region" aria-labelledby={`${id}-title`}>
        <table class="usage-table cards-on-phone">
          <caption class="visually-hidden">{range.words}, newest first, and the totals of the range</caption>
          <thead>
            <tr>
              <th scope="col">{unit}</th>
              {USAGE_COLUMNS.map((c) => (
                <th scope="col" class="number" key={c.name}>
                  {c.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {[...buckets].reverse().map((bucket) => {
              const counts = countsOf(bucket);
              return (
                <tr key={bucket.start}>
                  <th scope="row">{bucketWords(bucket.start, range.granularity)}</th>
                  {USAGE_COLUMNS.map((c) => (
                    <td class="number" data-label={c.label} key={c.name}>
                      {count(counts[c.name])}
                    </td>
                  ))}
                </tr>
              );
            })}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row">Total</th>
              {USAGE_COLUMNS.map((c) => (
                <td class="number" data-label={c.label} key={c.name}>
                  {count(total[c.name])}
                </td>
              ))}
            </tr>
          </tfoot>
        </table>
      </div>
    </section>
  );
}

/** The range of the page, as a select whose change goes into the URL. */
function UsageRangeSelect({ range, onChange }: { range: UsageRange; onChange: (key: string) => void }) {
  return (
    <label class="usage-range">
      Range{' '}
      <select
        class="select-inline"
        value={range.key}
        onChange={(event) => onChange(event.currentTarget.value)}
      >
        {USAGE_RANGES.map((r) => (
          <option key={r.key} value={r.key}>
            {r.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The usage of the range as CSV (`Accept: text/csv`), fetched with the session and saved as a file. */
function useCsvDownload(range: UsageRange) {
  return useAction(async () => {
    const query = usageQuery(range);
    const csv = await apiText(routes.usage.tenant, 'text/csv', { query });
    saveFile(`hubgate-usage-${range.key}-${query.from.slice(0, 10)}.csv`, csv, 'text/csv');
  });
}

/** The tenant's usage over a range: a chart, a table with totals, and a CSV download. */
export function UsagePage() {
  const { query, path, route } = useLocation();
  const range = usageRange(query.range);
  // The window moves with time: each read asks for the range ending with the current bucket.
  const usage = useResource(
    (signal) => api(routes.usage.tenant, { query: usageQuery(range), signal }),
    `usage ${range.key}`,
  );
  useFollow(usage);
  const csv = useCsvDownload(range);
  const buckets = usage.data?.data;
  return (
    <>
      <PageHeader
        title="Usage"
        description="What your organization used: events published, deliveries by outcome, attempts, proxy calls and webhooks ingested. Days and hours are UTC."
        actions={
          <button
            type="button"
            class="button"
            onClick={() => void csv.run()}
            disabled={csv.busy}
            aria-busy={csv.busy}
          >
            {csv.busy ? 'Preparing…' : 'Download CSV'}
          </button>
        }
      />
      <ErrorNotice error={csv.error} title="The CSV could not be downloaded." />
      <div class="log-toolbar">
        <UsageRangeSelect
          range={range}
          onChange={(key) => route(withQuery(path, { range: key === DEFAULT_RANGE_KEY ? null : key }), true)}
        />
        <span class="muted">Updated every few seconds while this page is open.</span>
      </div>
      {usage.error && !buckets ? (
        <ErrorNotice error={usage.error} title="The usage could not be loaded." />
      ) : !buckets ? (
        <Loading what="Loading the usage" />
      ) : (
        <>
          {usage.error ? <ErrorNotice error={usage.error} title="The usage could not be refreshed." /> : null}
          <UsageChart buckets={buckets} range={range} />
          <UsageTable buckets={buckets} range={range} />
        </>
      )}
    </>
  );
}

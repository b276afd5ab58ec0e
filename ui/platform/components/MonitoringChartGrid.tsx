import { ChartPanel } from './ChartPanel.js';
import { count, ms, percent, type Series, type summaries } from './monitoringHistory.js';

/** The four charts of the history: throughput, failure ratio, latency percentiles, queue depth. */
export function MonitoringChartGrid({
  series,
  text,
}: {
  series: Series;
  text: ReturnType<typeof summaries>;
}) {
  return (
    <div class="chart-grid">
      <ChartPanel
        title="Throughput"
        summary={text.throughput}
        yLabel="Deliveries per minute"
        times={series.times}
        series={[
          { label: 'Delivered', colour: '--good', values: series.delivered },
          { label: 'Failed', colour: '--bad', values: series.failed },
        ]}
        format={count}
        whole
      />
      <ChartPanel
        title="Failure ratio"
        summary={text.ratio}
        yLabel="Failed, % of ended"
        times={series.times}
        series={[{ label: 'Failed', colour: '--bad', values: series.ratio }]}
        format={percent}
      />
      <ChartPanel
        title="Latency"
        summary={text.latency}
        yLabel="Publish to delivered, ms"
        times={series.times}
        series={[
          { label: 'p50', colour: '--accent', values: series.p50 },
          { label: 'p95', colour: '--busy', values: series.p95 },
          { label: 'p99', colour: '--warn', values: series.p99 },
        ]}
        format={ms}
      />
      <ChartPanel
        title="Queue depth"
        summary={text.queue}
        yLabel="Deliveries due"
        times={series.times}
        series={[{ label: 'Due', colour: '--accent', values: series.queue }]}
        format={count}
        whole
      />
    </div>
  );
}

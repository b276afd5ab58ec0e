import type { MonitoringSnapshot } from './PlatformTypes.js';
import { SnapshotFigure } from './SnapshotFigure.js';
import { duration, ms, number } from './snapshotFormat.js';
import { SnapshotGroup } from './SnapshotGroup.js';
import { SnapshotStat } from './SnapshotStat.js';

/** Deliveries that ended in the snapshot's window: how many, how many failed, how fast. */
export function SnapshotDeliveries({ deliveries: d }: { deliveries: MonitoringSnapshot['deliveries'] }) {
  const window = d.windowSeconds === 3600 ? 'the last hour' : `the last ${duration(d.windowSeconds)}`;
  const ratio = d.successRatio;
  return (
    <SnapshotGroup
      className="platform-group-tall"
      id="deliveries-title"
      title="Deliveries"
      note={`Ended in ${window}; latency is from publish to delivered.`}
    >
      <SnapshotStat label="Delivered">
        <SnapshotFigure value={d.delivered} show={number} />
      </SnapshotStat>
      <SnapshotStat label="Failed" tone={d.failed ? 'bad' : undefined}>
        <SnapshotFigure value={d.failed} show={number} />
      </SnapshotStat>
      <SnapshotStat label="Success ratio" tone={ratio !== null && ratio < 0.95 ? 'bad' : undefined}>
        {ratio === null ? (
          <span title="Nothing ended in the window">—</span>
        ) : (
          `${(ratio * 100).toFixed(1)} %`
        )}
      </SnapshotStat>
      <SnapshotStat label="Latency p50">
        <SnapshotFigure value={d.latencyMs.p50} show={ms} />
      </SnapshotStat>
      <SnapshotStat label="Latency p95">
        <SnapshotFigure value={d.latencyMs.p95} show={ms} />
      </SnapshotStat>
      <SnapshotStat label="Latency p99">
        <SnapshotFigure value={d.latencyMs.p99} show={ms} />
      </SnapshotStat>
    </SnapshotGroup>
  );
}

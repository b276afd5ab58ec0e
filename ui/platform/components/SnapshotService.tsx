import type { MonitoringSnapshot } from './PlatformTypes.js';
import { SnapshotFigure } from './SnapshotFigure.js';
import { bytes, duration, ms, number } from './snapshotFormat.js';
import { SnapshotGroup } from './SnapshotGroup.js';
import { SnapshotStat } from './SnapshotStat.js';

/** The service itself: its database, uptime, HTTP traffic and process. */
export function SnapshotService({ snapshot }: { snapshot: MonitoringSnapshot }) {
  const db = snapshot.database;
  return (
    <SnapshotGroup
      className="platform-group-wide"
      id="service-title"
      title="Service"
      note={`hubgate ${snapshot.version} on Node.js ${snapshot.runtime.node}.`}
    >
      <SnapshotStat label="Database" tone={db.ok ? undefined : 'bad'}>
        {db.ok ? 'Answering' : 'Not answering'}
      </SnapshotStat>
      <SnapshotStat label="Database ping">
        <SnapshotFigure value={db.latencyMs} show={ms} />
      </SnapshotStat>
      <SnapshotStat label="Up for">{duration(snapshot.uptimeSeconds)}</SnapshotStat>
      <SnapshotStat label="HTTP requests">{number(snapshot.http.requests)}</SnapshotStat>
      <SnapshotStat label="Server errors (5xx)" tone={snapshot.http.errors5xx ? 'bad' : undefined}>
        {number(snapshot.http.errors5xx)}
      </SnapshotStat>
      <SnapshotStat label="Memory (RSS)">{bytes(snapshot.process.rssBytes)}</SnapshotStat>
      <SnapshotStat label="Heap used">{bytes(snapshot.process.heapUsedBytes)}</SnapshotStat>
      <SnapshotStat label="Event loop lag p99">{ms(snapshot.process.eventLoopLagMs)}</SnapshotStat>
    </SnapshotGroup>
  );
}

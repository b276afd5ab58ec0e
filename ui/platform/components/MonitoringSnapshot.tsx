import type { MonitoringSnapshot as Snapshot } from './PlatformTypes.js';
import { SnapshotDeliveries } from './SnapshotDeliveries.js';
import { SnapshotFigure } from './SnapshotFigure.js';
import { duration, number } from './snapshotFormat.js';
import { SnapshotGroup } from './SnapshotGroup.js';
import { SnapshotService } from './SnapshotService.js';
import { SnapshotStat } from './SnapshotStat.js';

/** The §9 snapshot in words and numbers, grouped as an operator reads it. */
export function MonitoringSnapshot({ snapshot }: { snapshot: Snapshot }) {
  const { deliveries: d, queue: q } = snapshot;
  return (
    <div class="platform-groups">
      <SnapshotDeliveries deliveries={d} />
      <SnapshotGroup id="queue-title" title="Queue" note="Deliveries waiting to be sent, or being sent now.">
        <SnapshotStat label="Pending">
          <SnapshotFigure value={q.pending} show={number} />
        </SnapshotStat>
        <SnapshotStat label="Retrying">
          <SnapshotFigure value={q.retrying} show={number} />
        </SnapshotStat>
        <SnapshotStat label="Being sent">
          <SnapshotFigure value={q.inFlight} show={number} />
        </SnapshotStat>
        <SnapshotStat
          label="Oldest due waiting"
          tone={q.oldestPendingAgeSeconds !== null && q.oldestPendingAgeSeconds > 300 ? 'warn' : undefined}
        >
          <SnapshotFigure value={q.oldestPendingAgeSeconds} show={duration} />
        </SnapshotStat>
      </SnapshotGroup>
      <SnapshotGroup id="tenants-title" title="Tenants and connections">
        <SnapshotStat label="Tenants">
          <SnapshotFigure value={snapshot.tenants} show={number} />
        </SnapshotStat>
        <SnapshotStat label="Active connections">
          <SnapshotFigure value={snapshot.connections.active} show={number} />
        </SnapshotStat>
        <SnapshotStat label="Disabled connections">
          <SnapshotFigure value={snapshot.connections.disabled} show={number} />
        </SnapshotStat>
      </SnapshotGroup>
      <SnapshotService snapshot={snapshot} />
    </div>
  );
}

import type { ComponentChildren } from 'preact';
import type { MonitoringSnapshot as Snapshot } from './PlatformTypes.js';

const number = (n: number) => n.toLocaleString('en-US');
const ms = (n: number) => `${n < 10 ? n.toFixed(1).replace(/\.0$/, '') : number(Math.round(n))} ms`;
const bytes = (n: number) =>
  n >= 1024 ** 3
    ? `${(n / 1024 ** 3).toFixed(1)} GiB`
    : `${Math.round(n / 1024 ** 2).toLocaleString('en-US')} MiB`;

/** "2 h 5 min", "45 s": how long, as a person says it. */
export function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days ${hours % 24} h`;
}

/** A figure that may be unknown (the database did not answer): a dash that says so. */
function Figure({ value, show }: { value: number | null; show: (n: number) => string }) {
  return value === null ? <span title="Unknown: the database did not answer">—</span> : <>{show(value)}</>;
}

function Stat({
  label,
  children,
  tone,
}: {
  label: string;
  children: ComponentChildren;
  tone?: 'bad' | 'warn';
}) {
  return (
    <div class={tone ? `stat platform-stat stat-${tone}` : 'stat platform-stat'}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function Group({
  id,
  title,
  note,
  children,
  className,
}: {
  id: string;
  title: string;
  note?: ComponentChildren;
  children: ComponentChildren;
  className?: string;
}) {
  return (
    <section class={`card platform-group ${className ?? ''}`} aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {note ? <p class="muted platform-note">{note}</p> : null}
      <dl class="platform-stats">{children}</dl>
    </section>
  );
}

/** The §9 snapshot in words and numbers, grouped as an operator reads it. */
export function MonitoringSnapshot({ snapshot }: { snapshot: Snapshot }) {
  const { deliveries: d, queue: q, database: db } = snapshot;
  const window = d.windowSeconds === 3600 ? 'the last hour' : `the last ${duration(d.windowSeconds)}`;
  const ratio = d.successRatio;
  return (
    <div class="platform-groups">
      <Group
        className="platform-group-tall"
        id="deliveries-title"
        title="Deliveries"
        note={`Ended in ${window}; latency is from publish to delivered.`}
      >
        <Stat label="Delivered">
          <Figure value={d.delivered} show={number} />
        </Stat>
        <Stat label="Failed" tone={d.failed ? 'bad' : undefined}>
          <Figure value={d.failed} show={number} />
        </Stat>
        <Stat label="Success ratio" tone={ratio !== null && ratio < 0.95 ? 'bad' : undefined}>
          {ratio === null ? (
            <span title="Nothing ended in the window">—</span>
          ) : (
            `${(ratio * 100).toFixed(1)} %`
          )}
        </Stat>
        <Stat label="Latency p50">
          <Figure value={d.latencyMs.p50} show={ms} />
        </Stat>
        <Stat label="Latency p95">
          <Figure value={d.latencyMs.p95} show={ms} />
        </Stat>
        <Stat label="Latency p99">
          <Figure value={d.latencyMs.p99} show={ms} />
        </Stat>
      </Group>
      <Group id="queue-title" title="Queue" note="Deliveries waiting to be sent, or being sent now.">
        <Stat label="Pending">
          <Figure value={q.pending} show={number} />
        </Stat>
        <Stat label="Retrying">
          <Figure value={q.retrying} show={number} />
        </Stat>
        <Stat label="Being sent">
          <Figure value={q.inFlight} show={number} />
        </Stat>
        <Stat
          label="Oldest due waiting"
          tone={q.oldestPendingAgeSeconds !== null && q.oldestPendingAgeSeconds > 300 ? 'warn' : undefined}
        >
          <Figure value={q.oldestPendingAgeSeconds} show={duration} />
        </Stat>
      </Group>
      <Group id="tenants-title" title="Tenants and connections">
        <Stat label="Tenants">
          <Figure value={snapshot.tenants} show={number} />
        </Stat>
        <Stat label="Active connections">
          <Figure value={snapshot.connections.active} show={number} />
        </Stat>
        <Stat label="Disabled connections">
          <Figure value={snapshot.connections.disabled} show={number} />
        </Stat>
      </Group>
      <Group
        className="platform-group-wide"
        id="service-title"
        title="Service"
        note={`hubgate ${snapshot.version} on Node.js ${snapshot.runtime.node}.`}
      >
        <Stat label="Database" tone={db.ok ? undefined : 'bad'}>
          {db.ok ? 'Answering' : 'Not answering'}
        </Stat>
        <Stat label="Database ping">
          <Figure value={db.latencyMs} show={ms} />
        </Stat>
        <Stat label="Up for">{duration(snapshot.uptimeSeconds)}</Stat>
        <Stat label="HTTP requests">{number(snapshot.http.requests)}</Stat>
        <Stat label="Server errors (5xx)" tone={snapshot.http.errors5xx ? 'bad' : undefined}>
          {number(snapshot.http.errors5xx)}
        </Stat>
        <Stat label="Memory (RSS)">{bytes(snapshot.process.rssBytes)}</Stat>
        <Stat label="Heap used">{bytes(snapshot.process.heapUsedBytes)}</Stat>
        <Stat label="Event loop lag p99">{ms(snapshot.process.eventLoopLagMs)}</Stat>
      </Group>
    </div>
  );
}

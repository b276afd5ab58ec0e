import { createHash } from 'node:crypto';

/** An alert's identity: a hash of its labels, sorted by name (Alertmanager's notion). */
export function fingerprintOf(labels: Record<string, string>): string {
  const sorted = Object.keys(labels)
    .sort()
    .map((name) => [name, labels[name]]);
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 16);
}

/**
 * The labels notices are grouped by (docs/api/limits.md: one notice per channel per evaluation for each
 * `(alertname, tenantId)`), as Alertmanager's `group_by`; an alert without a tenant is platform-wide.
 */
export function groupLabelsOf(labels: Record<string, string>): Record<string, string> {
  const { alertname = '', tenantId } = labels;
  return tenantId === undefined ? { alertname } : { alertname, tenantId };
}

/** The group as the outbox stores it; alert names are identifiers, so `/` cannot be part of one. */
export function groupKeyOf(labels: Record<string, string>): string {
  return `${labels.alertname ?? ''}/${labels.tenantId ?? ''}`;
}

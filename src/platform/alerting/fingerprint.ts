import { createHash } from 'node:crypto';

/** An alert's identity: a hash of its labels, sorted by name (Alertmanager's notion). */
export function fingerprintOf(labels: Record<string, string>): string {
  const sorted = Object.keys(labels)
    .sort()
    .map((name) => [name, labels[name]]);
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 16);
}

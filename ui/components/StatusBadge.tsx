/** A status word with a colour that agrees with it; the word carries the meaning, not the colour. */
const TONES: Record<string, 'good' | 'bad' | 'warn' | 'neutral' | 'busy'> = {
  active: 'good',
  healthy: 'good',
  delivered: 'good',
  disabled: 'neutral',
  revoked: 'neutral',
  cancelled: 'neutral',
  skipped: 'neutral',
  paused: 'warn',
  expired: 'warn',
  degraded: 'warn',
  retrying: 'warn',
  pending: 'busy',
  delivering: 'busy',
  failed: 'bad',
};

export function StatusBadge({ status, label }: { status: string; label?: string }) {
  return <span class={`badge badge-${TONES[status] ?? 'neutral'}`}>{label ?? status}</span>;
}

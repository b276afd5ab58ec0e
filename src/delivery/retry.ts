/**
 * When to try again after failed attempt number `attempt` (1-based), in seconds, or null when the
 * schedule is spent (docs/api/events.md): the scheduled delay ±20 % jitter; a Retry-After answer is honoured
 * up to twice the scheduled delay.
 */
export function retryDelaySeconds(
  attempt: number,
  schedule: readonly number[],
  retryAfterSeconds: number | null,
  random: () => number = Math.random,
): number | null {
  const scheduled = schedule[attempt - 1];
  if (scheduled === undefined) return null;
  const jittered = scheduled * (0.8 + 0.4 * random());
  if (retryAfterSeconds === null) return jittered;
  return Math.max(jittered, Math.min(retryAfterSeconds, scheduled * 2));
}

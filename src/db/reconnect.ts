/** The first pause after a lost connection: short, so a blip costs a blip. */
const FIRST_DELAY_MS = 100;
/** docs/api/limits.md: a background connection is tried again at most 5 s after the last try. */
export const MAX_RECONNECT_DELAY_MS = 5_000;

/**
 * How long to wait before reconnect try number `failures + 1`: a ceiling that doubles per failure
 * up to MAX_RECONNECT_DELAY_MS, and a random point in its upper half, so that every process that lost
 * the same server does not knock again at the same instant.
 */
export function reconnectDelayMs(failures: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_RECONNECT_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(failures, 16));
  return ceiling / 2 + (random() * ceiling) / 2;
}

/** Idle time before TCP keepalive probes start on a connection to PostgreSQL (pool and LISTEN alike). */
export const KEEPALIVE_AFTER_MS = 10_000;

import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { TelemetryConfig } from './settings.js';
import type { Tracing } from './types.js';

// Starts tracing, loading OpenTelemetry's SDK only when it is on (loading it takes longer than all of
// hubgate's start-up besides: docs/benchmarks.md).

/**
 * Tracing for a process (buildApp, `hubgate worker`), or undefined when it is off: then nothing of
 * OpenTelemetry is loaded, no hook or context manager is registered, and no log line changes.
 * Failed exports are logged as a warning, at most once a minute.
 */
export async function startTelemetry(
  config: TelemetryConfig | null,
  logger: Logger,
): Promise<Tracing | undefined> {
  if (!config) return undefined;
  const { startTracing } = await import('./sdk.js');
  return startTracing(config, logger);
}

/**
 * The `traceparent` of a delivery sent with tracing off: new IDs that no span of hubgate's has, so a
 * receiver's trace of it starts there and the event log shows what to look it up by. Sampled, so a
 * receiver that follows its caller's decision (OpenTelemetry's default) records it as it would a
 * request without one (docs/decisions/0052-tracing-with-opentelemetry.md).
 */
export function untracedTraceparent(): string {
  const ids = randomBytes(24).toString('hex');
  return `00-${ids.slice(0, 32)}-${ids.slice(32)}-01`;
}

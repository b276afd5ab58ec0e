import { monitorEventLoopDelay } from 'node:perf_hooks';
import { eventTypeMatches } from '../src/connections/event-types.js';
import {
  compileMatchers,
  MAX_DOCUMENT_PROGRAM_SIZE,
  type Matcher,
  matches,
} from '../src/platform/alerting/matchers.js';
import {
  worstEventType,
  worstEventTypePatterns,
  worstRoutingLabel,
  worstRoutingRegexes,
} from './patterns-inputs.js';

/**
 * Finding 1's benchmark: user-supplied patterns at the worst the limits allow, per evaluation, beside
 * the naive ceiling measured in the same run (a plain `===` against the same inputs, which no
 * matcher can beat).
 */
const RUNS = Number(process.env.BENCH_RUNS ?? 20_000);

/** Microseconds per call of `work`, after a warm-up. */
function perCall(work: () => unknown): number {
  for (let i = 0; i < RUNS / 10; i++) work();
  const started = process.hrtime.bigint();
  for (let i = 0; i < RUNS; i++) work();
  return Number(process.hrtime.bigint() - started) / RUNS / 1000;
}

const rows: Array<{ what: string; hubgate: number; ceiling: number }> = [];
const row = (what: string, hubgate: number, ceiling: number) => rows.push({ what, hubgate, ceiling });

const patterns = worstEventTypePatterns();
const type = worstEventType();
row(
  'eventTypes: 20 patterns × 100 chars vs a 100-char type',
  perCall(() => eventTypeMatches(patterns, type)),
  perCall(() => patterns.some((p) => p === type)),
);
for (const [i, pattern] of patterns.slice(0, 2).entries()) {
  row(
    `eventTypes: one pattern (${i === 0 ? 'stars between letters' : 'stars between pieces'})`,
    perCall(() => eventTypeMatches([pattern], type)),
    perCall(() => pattern === type),
  );
}

const label = worstRoutingLabel();
for (const value of worstRoutingRegexes()) {
  const matcher: Matcher = { name: 'tenantId', op: '=~', value };
  const labels = { tenantId: label };
  await compileMatchers([matcher]);
  row(
    `routing =~ ${value.length > 24 ? `${value.slice(0, 21)}…` : value} on a tenant ID`,
    perCall(() => matches(matcher, labels)),
    perCall(() => value === labels.tenantId),
  );
}

console.log(`per evaluation, µs (mean of ${RUNS.toLocaleString('en')} after warm-up)`);
console.log(`${'input'.padEnd(60)} ${'hubgate'.padStart(9)} ${'ceiling'.padStart(9)} ${'ratio'.padStart(7)}`);
for (const r of rows) {
  console.log(
    `${r.what.padEnd(60)} ${r.hubgate.toFixed(3).padStart(9)} ${r.ceiling.toFixed(3).padStart(9)} ${(r.hubgate / r.ceiling).toFixed(0).padStart(7)}`,
  );
}

// Compiling is the expensive part of a routing pattern (once per pattern and process). The costliest
// document allowed: distinct patterns of Unicode classes (the most time per RE2 instruction) up to
// MAX_DOCUMENT_PROGRAM_SIZE. Beside the total, what matters is the longest time the event loop was held.
const costly: Matcher[] = Array.from({ length: 60 }, (_, i) => ({
  name: 'tenantId',
  op: '=~',
  value: `\\pL{${990 - i}}`,
}));
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const started = performance.now();
const errors = await compileMatchers(costly);
const total = performance.now() - started;
delay.disable();
const compiledCount = errors.findIndex((e) => e !== undefined);
console.log(
  `\ncompile the costliest document allowed (${compiledCount} distinct \\pL{~990}, ` +
    `≤ ${MAX_DOCUMENT_PROGRAM_SIZE.toLocaleString('en')} RE2 instructions): ${(total / 1000).toFixed(2)} s in all, ` +
    `${(total / compiledCount).toFixed(1)} ms each; longest event-loop block ${(delay.max / 1e6).toFixed(1)} ms`,
);

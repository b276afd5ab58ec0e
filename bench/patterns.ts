import { monitorEventLoopDelay } from 'node:perf_hooks';
import { eventTypeMatches } from '../src/connections/event-types.js';
import { compileMatchers, type Matcher, matches } from '../src/platform/alerting/matchers.js';
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

// Compiling is the expensive part of a routing pattern (once per pattern and process): a PUT of the
// largest document compiles up to 2,000. Distinct worst patterns, so that the cache does not help;
// what matters beside the total is the longest time the event loop was held.
const COMPILES = Number(process.env.BENCH_COMPILES ?? 200);
const heavy = worstRoutingRegexes().at(-1) ?? '';
const distinct: Matcher[] = Array.from({ length: COMPILES }, (_, i) => ({
  name: 'tenantId',
  op: '=~',
  value: heavy.replace(/\{(\d+)\}/, (_, n: string) => `{${Number(n) - i}}`),
}));
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const started = performance.now();
await compileMatchers(distinct);
const total = performance.now() - started;
delay.disable();
console.log(
  `\ncompile ${COMPILES} distinct worst routing patterns (${heavy.length} chars): ` +
    `${(total / COMPILES).toFixed(1)} ms each, ${(total / 1000).toFixed(2)} s in all; ` +
    `longest event-loop block ${(delay.max / 1e6).toFixed(1)} ms`,
);

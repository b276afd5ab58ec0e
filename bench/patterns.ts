import { monitorEventLoopDelay } from 'node:perf_hooks';
import { eventTypeMatches } from '../src/connections/event-types.js';
import {
  compileMatchers,
  matches,
  MAX_DOCUMENT_PATTERN_LENGTH,
  MAX_DOCUMENT_PROGRAM_SIZE,
  type Matcher,
} from '../src/platform/alerting/matchers.js';
import { programSizeBound } from '../src/platform/alerting/program-size.js';
import {
  costliestRoutingRegexes,
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
// document allowed: as many characters of the costliest parsing and instructions of the costliest
// compiling as the bounds let through. Beside the total, what matters is the longest time the event
// loop was held.
const costly: Matcher[] = costliestRoutingRegexes('bench').map((value) => ({
  name: 'tenantId',
  op: '=~',
  value,
}));
const length = costly.reduce((sum, { value }) => sum + value.length, 0);
const size = costly.reduce((sum, { value }) => sum + programSizeBound(value), 0);
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const started = performance.now();
const cpu = process.cpuUsage();
const refused = await compileMatchers(costly);
const cpuMs = process.cpuUsage(cpu).user / 1000;
const total = performance.now() - started;
delay.disable();
if (refused) throw new Error(`the costliest document allowed was refused: ${refused.message}`);
// The longest single compile in CPU time (the event-loop block counts time the machine gave others).
const longest = Math.max(
  ...costliestRoutingRegexes('bench-each').map((value) => {
    const before = process.cpuUsage();
    void compileMatchers([{ name: 'tenantId', op: '=~', value }]);
    return process.cpuUsage(before).user / 1000;
  }),
);
console.log(
  `\ncompile the costliest document allowed (${costly.length} distinct patterns, ` +
    `${length.toLocaleString('en')} of ${MAX_DOCUMENT_PATTERN_LENGTH.toLocaleString('en')} characters, ` +
    `≤ ${size.toLocaleString('en')} of ${MAX_DOCUMENT_PROGRAM_SIZE.toLocaleString('en')} RE2 instructions): ` +
    `${(total / 1000).toFixed(2)} s in all (${(cpuMs / 1000).toFixed(2)} s of CPU); ` +
    `longest event-loop block ${(delay.max / 1e6).toFixed(1)} ms, longest compile ${longest.toFixed(1)} ms of CPU`,
);

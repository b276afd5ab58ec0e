// `npm run bench -- NAME`: runs bench/NAME.ts. Each benchmark measures hubgate side by side with a
// ceiling measured in the same run on the same machine, and prints both and their ratio.
const name = process.argv[2];
const available = [
  'access',
  'brokers',
  'delivery',
  'embedded',
  'event-log',
  'history',
  'ingest',
  'mcp',
  'patterns',
  'proxy',
  'telemetry',
  'tenants',
];
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <${available.join('|')}>`);
  process.exit(2);
}
// `delivery` has two groups of cases, both run unless BENCH_CASES names one: `throughput`
// (bench/delivery.ts) and `operating` (bench/delivery-operating.ts: throttle, recover, inspection).
const groups: Record<string, string> = { throughput: 'delivery', operating: 'delivery-operating' };
const cases = (process.env.BENCH_CASES ?? Object.keys(groups).join(',')).split(',');
const modules = name === 'delivery' ? cases.map((c) => groups[c] ?? '') : [name];
if (modules.includes('')) {
  console.error(`BENCH_CASES: comma-separated, any of ${Object.keys(groups).join(', ')}`);
  process.exit(2);
}
for (const module of modules) await import(`./${module}.js`);

import { sql } from 'kysely';
import { parseConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { aggregateMinutes } from '../src/platform/history-store.js';
import { minuteOf, readHistory, sampleHistory } from '../src/platform/history.js';
import { freshDatabase } from './support.js';

/**
 * GET /api/v1/platform/monitoring/history's read, for 1,440 minutes on a PostgreSQL database holding
 * a day of a million deliveries, beside two figures of the same run: the ceiling (reading the 1,440
 * rolled-up rows and nothing else, which no answer can beat) and what the answer would cost without
 * the rollup (the same figures aggregated from the deliveries at each call).
 */
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 50);
const DAY_MS = 86_400_000;

const target = await freshDatabase();
const database = await openDatabase({ kind: 'postgres', url: target.url });
try {
  await migrateToLatest(database);
  const db = database.kysely;
  const now = new Date();
  const from = new Date(now.getTime() - DAY_MS);

  const seeding = performance.now();
  await sql`insert into tenants (id, name, created_at) values ('ten_bench', 'bench', ${from})`.execute(db);
  await sql`insert into connections (id, tenant_id, connector_key, display_name, status, config, created_at)
    values ('con_bench', 'ten_bench', 'webhook', 'bench', 'active', '{}'::jsonb, ${from})`.execute(db);
  // A day of deliveries, evenly spread, 2 % failed, latencies of 5–500 ms.
  await sql`insert into events (id, tenant_id, type, payload_sealed, delivery_count, created_at)
    select 'evt_' || i, 'ten_bench', 'bench.event', '', 1,
      ${from}::timestamptz + (i * ${DAY_MS / DELIVERIES}::float8) * interval '1 millisecond'
    from generate_series(1, ${DELIVERIES}) as i`.execute(db);
  await sql`insert into deliveries (id, tenant_id, event_id, connection_id, status, attempt_count,
      created_at, updated_at, delivered_at)
    select 'dlv_' || e.i, 'ten_bench', 'evt_' || e.i, 'con_bench',
      case when e.i % 50 = 0 then 'failed' else 'delivered' end, 1, e.at,
      e.at + (5 + (e.i::bigint * 7919) % 495) * interval '1 millisecond',
      case when e.i % 50 = 0 then null else e.at + (5 + (e.i::bigint * 7919) % 495) * interval '1 millisecond' end
    from (select i, ${from}::timestamptz + (i * ${DAY_MS / DELIVERIES}::float8) * interval '1 millisecond' as at
      from generate_series(1, ${DELIVERIES}) as i) e`.execute(db);
  await sql`analyze`.execute(db);
  const seeded = performance.now() - seeding;

  const config = parseConfig({ DATABASE_URL: target.url, HUBGATE_SECRET_KEY: 'x'.repeat(44) });
  const rollupStarted = performance.now();
  await sampleHistory({ db, config }, now);
  const rollup = performance.now() - rollupStarted;

  const time = async (work: () => Promise<unknown>) => {
    for (let i = 0; i < 3; i++) await work();
    const samples: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      await work();
      samples.push(performance.now() - started);
    }
    samples.sort((a, b) => a - b);
    return { p50: samples[Math.floor(RUNS / 2)] ?? 0, p95: samples[Math.floor(RUNS * 0.95)] ?? 0 };
  };

  const points = await readHistory({ db }, now, 1440);
  const counted = points.reduce((sum, p) => sum + p.delivered + p.failed, 0);
  const hubgate = await time(() => readHistory({ db }, now, 1440));
  const start = new Date(minuteOf(now).getTime() - 1439 * 60_000);
  const ceiling = await time(() =>
    db
      .selectFrom('monitoring_minutes')
      .selectAll()
      .where('minute', '>=', start)
      .where('minute', '<=', now)
      .execute(),
  );
  const live = await time(() => aggregateMinutes(db, start, new Date(minuteOf(now).getTime() + 60_000)));

  console.log(
    `${DELIVERIES.toLocaleString('en')} deliveries over 24 h seeded in ${(seeded / 1000).toFixed(1)} s;`,
  );
  console.log(
    `first rollup (a whole day at once) ${rollup.toFixed(0)} ms; the answer counts ${counted.toLocaleString('en')}`,
  );
  console.log(`history, 1,440 minutes, ms over ${RUNS} calls      p50      p95`);
  const line = (what: string, t: { p50: number; p95: number }) =>
    console.log(`${what.padEnd(44)} ${t.p50.toFixed(2).padStart(8)} ${t.p95.toFixed(2).padStart(8)}`);
  line('hubgate (readHistory)', hubgate);
  line('ceiling: the 1,440 rows alone', ceiling);
  line('without rollup: aggregate at each call', live);
  console.log(`ratio hubgate / ceiling: ${(hubgate.p50 / ceiling.p50).toFixed(2)}`);
} finally {
  await database.close();
  await target.drop();
}

import { sql, type Kysely } from 'kysely';
import { platformScopeOf } from '../src/access/scope.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createDay, dayOf, partitionDays } from '../src/db/partitions.js';
import type { DB } from '../src/db/schema.js';
import {
  findEventTime,
  listLogRows,
  logAttemptsOf,
  logPageQuery,
  type LogFilters,
} from '../src/delivery/log-store.js';
import { freshDatabase } from './support.js';

/**
 * A connection's event log (GET …/connections/:id/events) on a PostgreSQL database holding
 * BENCH_DELIVERIES (default 200,000) deliveries of one connection spread over the last 20 days (a
 * partition a day, 38 of them as retention keeps), and half as many of a second connection of the
 * same tenant: each filter of docs/api/events.md alone and in combinations, the first page and a page in
 * the middle of the matches, with the indexes the plan read (`BENCH_PLANS=1` prints each plan whole),
 * beside two references of the same run.
 */
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 200_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const DAYS = 20;
const DAY_MS = 86_400_000;
const TENANT = 'ten_bench';
const CONNECTION = 'con_bench';

/** Event types of 40, 30, 20 and 10 % of the events, and one of 1 in 10,000 (20 in 200,000). */
const TYPES_SQL = sql`case
  when i % 10000 = 0 then 'contract.signed'
  when i % 10 < 4 then 'employee.created'
  when i % 10 < 7 then 'employee.updated'
  when i % 10 < 9 then 'invoice.paid'
  else 'invoice.failed' end`;

async function seed(db: Kysely<DB>, now: Date): Promise<void> {
  const from = new Date(now.getTime() - DAYS * DAY_MS);
  const have = new Set(await partitionDays(db));
  for (let d = -30; d <= 7; d++) {
    const day = dayOf(new Date(now.getTime() + d * DAY_MS));
    if (!have.has(day)) await createDay(db, day);
  }
  await sql`insert into tenants (id, name, created_at) values (${TENANT}, 'bench', ${from})`.execute(db);
  await sql`insert into connections (id, tenant_id, connector_key, display_name, status, config, created_at)
    values (${CONNECTION}, ${TENANT}, 'webhook', 'bench', 'active', '{}'::jsonb, ${from}),
      ('con_other', ${TENANT}, 'webhook', 'other', 'active', '{}'::jsonb, ${from})`.execute(db);
  const step = sql`(${(DAYS * DAY_MS) / DELIVERIES}::float8 * interval '1 millisecond')`;
  await sql`insert into events (id, tenant_id, type, payload_sealed, delivery_count, created_at)
    select 'evt_' || lpad(i::text, 22, '0'), ${TENANT}, ${TYPES_SQL}, 'x', 2, ${from}::timestamptz + i * ${step}
    from generate_series(1, ${DELIVERIES}) as i`.execute(db);
  // Mostly delivered; an outage of 5 % of the log in a row failed with 503; 404s, timeouts, skipped,
  // retrying and pending here and there; ten test deliveries.
  await sql`insert into deliveries (id, tenant_id, event_id, connection_id, status, attempt_count,
      created_at, updated_at, delivered_at, test, last_response_status)
    select 'dlv_' || lpad(i::text, 22, '0') || c.suffix, ${TENANT}, 'evt_' || lpad(i::text, 22, '0'), c.id,
      s.status, 1, at, at, case when s.status = 'delivered' then at end, i % 20000 = 7 and c.id = ${CONNECTION},
      s.code
    from generate_series(1, ${DELIVERIES}) as i
    cross join lateral (select ${from}::timestamptz + i * ${step} as at) t
    cross join (values (${CONNECTION}, 'a'), ('con_other', 'b')) as c(id, suffix)
    cross join lateral (select case
      when i between ${Math.floor(DELIVERIES * 0.3)} and ${Math.floor(DELIVERIES * 0.35)} then 'failed'
      when i % 200 = 1 then 'failed' when i % 100 = 2 then 'skipped'
      when i % 1000 = 3 then 'retrying' when i % 5000 = 4 then 'pending' else 'delivered' end as status) s0
    cross join lateral (select s0.status, case
      when s0.status = 'delivered' then case when i % 3 = 0 then 204 else 200 end
      when s0.status in ('failed', 'retrying') and i % 200 = 1 then 404
      when s0.status in ('failed', 'retrying') and i % 7 = 0 then null
      when s0.status in ('failed', 'retrying') then 503 end as code) s
    where c.id = ${CONNECTION} or i % 2 = 0`.execute(db);
  await sql`insert into delivery_attempts (delivery_id, delivery_created_at, number, started_at, duration_ms,
      remote_address, response_status, error, error_detail, request, response)
    select id, created_at, 1, created_at, 12, '127.0.0.1', last_response_status, null, null,
      '{"method":"POST","url":"https://example.com/hook","headers":{"content-type":"application/json"}}',
      '{"headers":{"content-length":"2"},"body":"ok","bodyTruncated":false}'
    from deliveries`.execute(db);
  await sql`analyze`.execute(db);
}

interface Case {
  name: string;
  filters: LogFilters | ((db: Kysely<DB>) => Promise<LogFilters>);
}

const like = (pattern: string) => pattern.replace(/[\\%_]/g, '\\$&').replaceAll('*', '%');
const RARE_EVENT = `evt_${String(DELIVERIES / 2 + 1).padStart(22, '0')}`;

const CASES: Case[] = [
  { name: 'no filter', filters: {} },
  { name: 'status=failed', filters: { statuses: ['failed'] } },
  { name: 'status=pending (rare)', filters: { statuses: ['pending'] } },
  { name: 'status=failed,skipped', filters: { statuses: ['failed', 'skipped'] } },
  { name: 'status=pending,retrying (rare)', filters: { statuses: ['pending', 'retrying'] } },
  { name: 'eventType=employee.created', filters: { eventTypeLike: like('employee.created') } },
  { name: 'eventType=employee.*', filters: { eventTypeLike: like('employee.*') } },
  { name: 'eventType=contract.signed (rare)', filters: { eventTypeLike: like('contract.signed') } },
  { name: 'eventType=*.signed (rare)', filters: { eventTypeLike: like('*.signed') } },
  {
    name: 'eventId',
    filters: async (db) => {
      const scope = benchScope();
      const createdAt = await findEventTime(db, scope, RARE_EVENT);
      return createdAt ? { event: { id: RARE_EVENT, createdAt } } : {};
    },
  },
  { name: 'since/until, one hour 10 days ago', filters: window(10, 1) },
  { name: 'test=true', filters: { test: true } },
  { name: 'test=false', filters: { test: false } },
  { name: 'responseStatus=2xx', filters: { responseStatus: { min: 200, max: 299 } } },
  { name: 'responseStatus=5xx', filters: { responseStatus: { min: 500, max: 599 } } },
  { name: 'responseStatus=404', filters: { responseStatus: { min: 404, max: 404 } } },
  {
    name: 'status=failed&responseStatus=404',
    filters: { statuses: ['failed'], responseStatus: { min: 404, max: 404 } },
  },
  {
    name: 'status=failed&eventType=invoice.*',
    filters: { statuses: ['failed'], eventTypeLike: like('invoice.*') },
  },
  { name: 'status=failed&since/until, a day', filters: { statuses: ['failed'], ...window(15, 24) } },
  { name: 'test=true&status=delivered', filters: { test: true, statuses: ['delivered'] } },
];

function window(daysAgo: number, hours: number): LogFilters {
  const until = new Date(Date.now() - daysAgo * DAY_MS);
  return { since: new Date(until.getTime() - hours * 3_600_000), until };
}

function benchScope() {
  return platformScopeOf({ kind: 'platform_key', keyId: 'pky_bench', prefix: 'plt_bench' } as never, {
    id: TENANT,
    entitlements: ['integrations'],
  });
}

async function timed(work: () => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  for (let i = 0; i < 3; i++) await work();
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await work();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(RUNS / 2)] ?? 0, p95: samples[Math.floor(RUNS * 0.95)] ?? 0 };
}

/** The plan of the first page's query as listLogRows runs it, with its parameters written in. */
async function explain(db: Kysely<DB>, filters: LogFilters): Promise<string[]> {
  const query = logPageQuery(db, benchScope(), CONNECTION, filters, 20, undefined).compile();
  const text = inline(query.sql, query.parameters);
  return db.transaction().execute(async (trx) => {
    await sql`select set_config('jit', 'off', true)`.execute(trx);
    const { rows } = await sql<{ 'QUERY PLAN': string }>`explain (analyze, buffers) ${sql.raw(text)}`.execute(
      trx,
    );
    return rows.map((r) => r['QUERY PLAN']);
  });
}

function inline(text: string, parameters: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_m, n: string) => {
    const value = parameters[Number(n) - 1];
    if (value instanceof Date) return `'${value.toISOString()}'::timestamptz`;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    return `'${String(value).replaceAll("'", "''")}'`;
  });
}

/** Which indexes a plan reads (by the partition index's column part) and how long it planned and ran. */
function planSummary(lines: string[]): string {
  const indexes = new Set<string>();
  for (const line of lines) {
    const used = / using (\S+) on (\S+)/.exec(line);
    if (used)
      indexes.add(`${used[2]!.replace(/_p\d{8}$|_default$/, '')}:${used[1]!.replace(/^\w+?_p\d{8}_/, '')}`);
  }
  const time = (what: string) => lines.find((l) => l.trim().startsWith(what))?.replace(/.*: /, '') ?? '?';
  const nodes = ['Sort', 'Hash Join', 'Hash Semi Join', 'Nested Loop', 'Merge Semi Join'].filter((node) =>
    lines.some((l) => l.includes(`-> ${node} `) || l.includes(`->  ${node} `)),
  );
  return `planned ${time('Planning Time')}, ran ${time('Execution Time')}; ${[...indexes].join(', ')}${nodes.length ? `; ${nodes.join(', ')}` : ''}`;
}

/** Two references of the same run: the page's rows alone (the ceiling), and the log as read before 0013. */
async function references(db: Kysely<DB>): Promise<void> {
  const ceiling = await timed(() =>
    db
      .selectFrom('deliveries')
      .select(['id', 'created_at'])
      .where('connection_id', '=', CONNECTION)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(21)
      .execute(),
  );
  line('ceiling: 21 rows of the connection, bare', DELIVERIES, ceiling);
  // The join the log was read with until now: estimated at one row, planned as a hash join and a sort.
  const joined = await timed(() =>
    db
      .selectFrom('deliveries')
      .innerJoin('events', (join) =>
        join
          .onRef('events.id', '=', 'deliveries.event_id')
          .onRef('events.created_at', '=', 'deliveries.created_at'),
      )
      .select(['deliveries.id', 'deliveries.created_at', 'events.type'])
      .where('deliveries.tenant_id', '=', TENANT)
      .where('deliveries.connection_id', '=', CONNECTION)
      .orderBy('deliveries.created_at', 'desc')
      .orderBy('deliveries.id', 'desc')
      .limit(21)
      .execute(),
  );
  line('before: deliveries joined with events', DELIVERIES, joined);
}

function line(name: string, matches: number, first: { p50: number; p95: number }, deep?: { p50: number }) {
  const ms = (n: number) => n.toFixed(1).padStart(7);
  console.log(
    `| ${name.padEnd(42)} | ${String(matches).padStart(7)} | ${ms(first.p50)} | ${ms(first.p95)} | ${deep ? ms(deep.p50) : '       '} |`,
  );
}

async function measure(db: Kysely<DB>, c: Case): Promise<void> {
  const scope = benchScope();
  const filters = typeof c.filters === 'function' ? await c.filters(db) : c.filters;
  const all = await listLogRows(db, scope, CONNECTION, filters, 100_000_000, undefined);
  const middle = all[Math.floor(all.length / 2)];
  const after = middle ? { createdAt: new Date(middle.created_at), id: middle.id } : undefined;
  const read = (from: typeof after) => () =>
    listLogRows(db, scope, CONNECTION, filters, 20, from).then((rows) => logAttemptsOf(db, rows));
  line(c.name, all.length, await timed(read(undefined)), await timed(read(after)));
  const plan = await explain(db, filters);
  console.log(`|   ${planSummary(plan)}`);
  if (process.env.BENCH_PLANS) for (const text of plan) console.log(`    ${text}`);
}

const target = await freshDatabase();
const database = await openDatabase({ kind: 'postgres', url: target.url });
try {
  await migrateToLatest(database);
  const db = database.kysely;
  const seeding = performance.now();
  await seed(db, new Date());
  const seconds = ((performance.now() - seeding) / 1000).toFixed(1);
  console.log(
    `${(DELIVERIES * 1.5).toLocaleString('en')} deliveries, ${DELIVERIES.toLocaleString('en')} of them in the connection, seeded in ${seconds} s; ms over ${RUNS} reads of a page of 20 with its attempts`,
  );
  console.log(`| ${'case'.padEnd(42)} | matches |  1st p50 |  1st p95 | deep p50 |`);
  await references(db);
  for (const c of CASES) await measure(db, c);
} finally {
  await database.close();
  // BENCH_KEEP=1 leaves the database for EXPLAIN by hand.
  if (process.env.BENCH_KEEP) console.log(`kept ${target.url}`);
  else await target.drop();
}

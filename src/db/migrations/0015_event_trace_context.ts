import { sql, type Kysely } from 'kysely';

// OpenTelemetry tracing (docs/operators/telemetry.md): the W3C `traceparent` of the span that published
// an event, so that each delivery attempt, later and perhaps in another process, links its span to it.
// Null when tracing was off at the publish. Added on the partitioned parent, so every day's partition
// (those there now and those made later) has it; nullable with no default, so no row is rewritten.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events add column trace_context text`.execute(db);
}

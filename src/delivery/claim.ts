import { sql, type Kysely, type Selectable } from 'kysely';
import type { ConnectionsTable, DB, EventsTable } from '../db/schema.js';
import type { DeliveryRow } from './store.js';

/** A claimed delivery with what sending it needs. */
export type ClaimedRow = Pick<
  DeliveryRow,
  'id' | 'event_id' | 'connection_id' | 'attempt_count' | 'created_at'
> &
  // Per-key ordering (ordering.ts): when the delivery ends, the next of its key is released.
  Partial<Pick<DeliveryRow, 'ordering_key'>> &
  Pick<
    Selectable<ConnectionsTable>,
    'connector_key' | 'config' | 'credentials_sealed' | 'previous_credentials_sealed' | 'previous_valid_until'
  > &
  Pick<Selectable<EventsTable>, 'type' | 'payload_sealed'> & {
    connection_status: Selectable<ConnectionsTable>['status'];
    event_created_at: Selectable<EventsTable>['created_at'];
    /** When retaken from a claim that expired: when that claim was made, and when it ran out. */
    lost_claim_at: Date | null;
    lost_claim_until: Date | null;
    /**
     * When this claim runs out (the attempt's deadline comes before it). The claim statement reads
     * it; a delivery claimed by its publish (direct dispatch) has it set by the worker that takes it.
     */
    lease_until?: Date | null;
  } &
  // What the attempt's span says and links to (docs/operators/telemetry.md); a claim reads both.
  Partial<Pick<Selectable<EventsTable>, 'tenant_id' | 'trace_context'>>;

/** What a claim keeps after its attempt's deadline, at the least: writing the attempt's outcome. */
export const OUTCOME_ALLOWANCE_MS = 5_000;

/**
 * How long a claim lasts: longer than any attempt can take (one timeout, plus reading and writing
 * the outcome), so a live worker never loses a claim mid-send; a dead worker's claims are due again
 * after it. The attempt's deadline (`attemptDeadline`) is what holds an attempt to it.
 */
export function leaseDuration(timeoutMs: number): number {
  return timeoutMs * 2 + OUTCOME_ALLOWANCE_MS;
}

/** When a claim made at `now` runs out. */
export function leaseEnd(now: Date, leaseMs: number): Date {
  return new Date(now.getTime() + leaseMs);
}

/**
 * When an attempt that starts sending at `now` must have ended, every call of it (token requests
 * and sends alike, docs/decisions/0063): DELIVERY_TIMEOUT_MS from now, and never later than
 * OUTCOME_ALLOWANCE_MS before its claim runs out, so no request of it is open once another worker
 * may take the delivery, or once a pause or revoke stops waiting for it.
 */
export function attemptDeadline(now: Date, leaseUntil: Date, timeoutMs: number): Date {
  return new Date(Math.min(now.getTime() + timeoutMs, leaseUntil.getTime() - OUTCOME_ALLOWANCE_MS));
}

/**
 * The claim this row was retaken from, when it was one that expired (its worker died or lost the
 * database mid-attempt): when it was made and when it ran out. Null for a due delivery.
 */
export function lostClaim(row: ClaimedRow): { claimedAt: Date; claimEnded: Date } | null {
  if (!row.lost_claim_at || !row.lost_claim_until) return null;
  return { claimedAt: new Date(row.lost_claim_at), claimEnded: new Date(row.lost_claim_until) };
}

/**
 * A delivery its publish claimed (direct dispatch) comes without its lease, which the publish set
 * when it reserved the slot (dispatch.ts): after the event was created, so the lease ends no
 * earlier than `created_at` plus its length. The attempt's deadline is reckoned from that bound.
 */
export function withDispatchLease(row: ClaimedRow, leaseMs: number): ClaimedRow {
  return row.lease_until ? row : { ...row, lease_until: leaseEnd(new Date(row.created_at), leaseMs) };
}

export interface ClaimRequest {
  workerId: string;
  now: Date;
  leaseUntil: Date;
  limit: number;
}

/**
 * Claims due deliveries and reads what sending them needs (connection, credentials, payload) in one
 * statement: the read sees each claim as it was made, so a revocation that lands later is caught
 * only by the outcome write (see README, Delivery). The due condition is written so that the
 * partial index on `next_attempt_at` serves it in order (a claim keeps `next_attempt_at` at the
 * moment it was made, so an expired claim is due by it too): with a backlog, an `OR` of the two
 * cases made PostgreSQL sort every due row for each claim (17 ms for 20,000, against 3.5 ms).
 */
export async function claimDue(db: Kysely<DB>, request: ClaimRequest): Promise<ClaimedRow[]> {
  const { workerId, now, leaseUntil, limit } = request;
  const result = await sql<ClaimedRow>`
      with due as (
        select id, created_at, status, updated_at, lease_until from deliveries
        where status in ('pending', 'retrying', 'delivering') and next_attempt_at <= ${now}
          and (status <> 'delivering' or lease_until < ${now})
        order by next_attempt_at
        limit ${limit}
        for update skip locked),
      claimed as (
        update deliveries d set status = 'delivering', lease_until = ${leaseUntil},
          leased_by = ${workerId}, updated_at = ${now}, next_attempt_at = ${now}
        from due where d.id = due.id and d.created_at = due.created_at
        returning d.id, d.event_id, d.connection_id, d.attempt_count, d.created_at, d.ordering_key, d.lease_until,
          case when due.status = 'delivering' then due.updated_at end as lost_claim_at,
          case when due.status = 'delivering' then due.lease_until end as lost_claim_until)
      select claimed.id, claimed.event_id, claimed.connection_id, claimed.attempt_count, claimed.created_at,
        claimed.ordering_key, claimed.lost_claim_at, claimed.lost_claim_until, claimed.lease_until,
        c.status as connection_status, c.connector_key, c.config, c.credentials_sealed,
        c.previous_credentials_sealed, c.previous_valid_until, e.type, e.payload_sealed,
        e.created_at as event_created_at, e.tenant_id, e.trace_context
      from claimed
      join connections c on c.id = claimed.connection_id
      join events e on e.id = claimed.event_id and e.created_at = claimed.created_at`.execute(db);
  return result.rows;
}

/** Claims up to `limit` due deliveries for worker `workerId`, each for `leaseMs` from now. */
export function claimerFor(ctx: { db: Kysely<DB>; now: () => Date }, workerId: string, leaseMs: number) {
  return (limit: number) => {
    const now = ctx.now();
    return claimDue(ctx.db, { workerId, now, leaseUntil: leaseEnd(now, leaseMs), limit });
  };
}

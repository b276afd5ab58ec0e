import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { recordAudit, type AuditAction } from '../../src/access/audit.js';
import { purgeAccessRecords } from '../../src/access/retention.js';
import { randomBase62 } from '../../src/crypto/base62.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { waitUntil } from '../helpers/wait.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const RETENTION_DAYS = 30;

/** Waits until `count` reaches zero, asking the database every 50 ms. */
async function untilNone(count: () => Promise<number>, what: string): Promise<void> {
  await waitUntil(async () => (await count()) === 0, { message: what });
}

describe('access records are deleted once they no longer matter (docs/api/limits.md retention)', () => {
  let h: Harness;
  before(async () => {
    // Retention runs beside the workers; every 100 ms here instead of hourly.
    h = await startHarness({
      env: { AUDIT_RETENTION_DAYS: String(RETENTION_DAYS) },
      workers: { retentionIntervalMs: 100 },
    });
  });
  after(() => h.close());

  const db = () => h.database.kysely;

  async function audit(action: string, at: Date): Promise<void> {
    await recordAudit(
      db(),
      { actorType: 'system', actorId: null, ip: null, requestId: null, at },
      // A made-up action, only to find this test's rows again: the writer takes it as any other.
      { action: action as AuditAction, tenantId: null },
    );
  }
  const auditLeft = async (action: string) =>
    (await db().selectFrom('audit_log').select('id').where('action', '=', action).execute()).length;
  const failuresLeft = async (account: string) =>
    (await db().selectFrom('sign_in_failures').select('account').where('account', '=', account).execute())
      .length;

  test(`audit entries older than AUDIT_RETENTION_DAYS go; younger ones stay`, async () => {
    const now = Date.now();
    const old = `test.old_${randomBase62(6)}`;
    const young = `test.young_${randomBase62(6)}`;
    await audit(old, new Date(now - (RETENTION_DAYS + 1) * DAY));
    await audit(young, new Date(now - (RETENTION_DAYS - 1) * DAY));
    await untilNone(() => auditLeft(old), 'the old audit entry to be deleted');
    assert.equal(await auditLeft(young), 1, 'an audit entry younger than the retention period is deleted');
  });

  test('sign-in failures go once their 15-minute window has passed, not before', async () => {
    const now = Date.now();
    const stale = `stale-${randomBase62(6).toLowerCase()}@example.com`;
    const fresh = `fresh-${randomBase62(6).toLowerCase()}@example.com`;
    await db()
      .insertInto('sign_in_failures')
      .values([
        { account: stale, failed_at: new Date(now - 16 * MINUTE) },
        { account: fresh, failed_at: new Date(now - 14 * MINUTE) },
      ])
      .execute();
    for (let i = 0; i < 9; i++) {
      await db()
        .insertInto('sign_in_failures')
        .values({ account: fresh, failed_at: new Date(now - i * MINUTE) })
        .execute();
    }
    await untilNone(() => failuresLeft(stale), 'the stale failure to be deleted');
    // The fresh account's ten failures still lock it.
    assert.equal(await failuresLeft(fresh), 10, 'failures still inside their 15-minute window are deleted');
    const locked = await h.request('POST', '/api/v1/auth/login', { body: { email: fresh, password: 'x' } });
    assert.equal(locked.status, 429, 'an account with ten recent failures is not locked');
  });

  test('a purge deletes more than one batch, and only what has expired', async () => {
    // Far in the future, so everything the other tests left is expired too, and counted apart.
    const now = new Date(Date.now() + 1_000 * DAY);
    const account = `many-${randomBase62(6).toLowerCase()}@example.com`;
    const failedAt = new Date(now.getTime() - 20 * MINUTE);
    await db()
      .insertInto('sign_in_failures')
      .values(Array.from({ length: 2_500 }, () => ({ account, failed_at: failedAt })))
      .execute();
    await db()
      .insertInto('sign_in_failures')
      .values({ account, failed_at: new Date(now.getTime() - MINUTE) })
      .execute();
    const purged = await purgeAccessRecords(db(), now, RETENTION_DAYS);
    assert.ok(purged.signInFailures >= 2_500, JSON.stringify(purged));
    assert.equal(
      await failuresLeft(account),
      1,
      'a failure still inside its window is purged, or an expired one kept',
    );
  });
});

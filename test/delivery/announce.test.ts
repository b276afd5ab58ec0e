import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAnnouncer, createWakeup, DELIVERY_CHANNEL } from '../../src/delivery/wakeup.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';

// Publishes announce new deliveries to every process with NOTIFY. Under load they are folded: one
// NOTIFY for a burst, but always one sent after the last announcement, so no process misses work.
if (ENGINE === 'postgres') {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    await db.drop();
  });

  test('a burst of announcements is folded into few NOTIFYs, the last sent after the last announcement', async () => {
    const other = await db.openAnother();
    let heard = 0;
    let waiting: (() => void) | undefined;
    const unlisten = await other.listen!(DELIVERY_CHANNEL, () => {
      heard++;
      waiting?.();
    });
    const heardAtLeast = async (n: number) => {
      while (heard < n) await new Promise<void>((resolve) => (waiting = resolve));
    };
    try {
      await heardAtLeast(1); // listening starts with one wake-up of its own
      heard = 0;
      const wakeup = createWakeup();
      const announce = createAnnouncer(db.database, wakeup, (error) => assert.fail(String(error)));

      for (let i = 0; i < 100; i++) announce();
      // The first NOTIFY goes at once; the other 99 announcements fold into one more after it.
      await heardAtLeast(2);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(heard, 2, 'a burst of 100 announcements is not folded into two NOTIFYs');

      announce();
      await heardAtLeast(3);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(heard, 3, 'a lone announcement is one NOTIFY');
    } finally {
      await unlisten();
      await other.close();
    }
  });
}

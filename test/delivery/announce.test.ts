import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Database } from '../../src/db/database.js';
import { createAnnouncer, createWakeup, DELIVERY_CHANNEL } from '../../src/delivery/wakeup.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

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
      // The announcer's statements, counted as they are sent and answered: "nothing more" is checked once
      // every NOTIFY it sent has been answered and heard, not after a sleep.
      let sent = 0;
      let answered = 0;
      const counted: Database = {
        ...db.database,
        kysely: db.database.kysely.withPlugin({
          transformQuery: (args) => {
            sent++;
            return args.node;
          },
          transformResult: async (args) => {
            answered++;
            return args.result;
          },
        }),
      };
      const announce = createAnnouncer(counted, wakeup, (error) => assert.fail(String(error)));
      const settled = (atLeast: number) =>
        waitUntil(() => sent >= atLeast && answered === sent && heard >= sent, {
          message: () => `the announcer done and heard (${sent} sent, ${answered} answered, ${heard} heard)`,
        });

      for (let i = 0; i < 100; i++) announce();
      // The first NOTIFY goes at once; the other 99 announcements fold into one more after it.
      await settled(2);
      assert.equal(heard, 2, 'a burst of 100 announcements is not folded into two NOTIFYs');

      announce();
      await settled(3);
      assert.equal(heard, 3, 'a lone announcement is one NOTIFY');
    } finally {
      await unlisten();
      await other.close();
    }
  });
}

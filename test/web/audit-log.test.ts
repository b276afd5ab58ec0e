import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { recordAudit } from '../../src/access/audit.js';
import {
  assertNoPageErrors,
  assertNoSeriousViolations,
  browserSkipReason,
  launchBrowser,
  newPage,
  screenshot,
  signInThroughUi,
  startUiHarness,
  visible,
  WAIT_MS,
  type UiHarness,
} from '../helpers/browser.js';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';

// The audit log read by a person (docs/operators/web-ui.md): every action in words, and its details too
// (which fields an edit changed, an OAuth2 authorization's scopes), never a code. Skipped test by test
// when Chromium is missing, so the run's totals count them.
const skip = browserSkipReason();

describe('audit log in words', () => {
  let h: UiHarness;
  let browser: Browser;
  before(async () => {
    if (skip) return;
    browser = await launchBrowser();
    h = await startUiHarness();
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  test(
    'operating a connection reads as words: the fields an edit changed, OAuth2 scopes, no raw action',
    { skip, timeout: 120_000 },
    async () => {
      const { tenant, user, session } = await makeSignedInTenant(h);
      const connection = await makeWebhookConnection(h, session, 'https://receiver.example.com/orders', {
        displayName: 'Orders webhook',
      });
      const connections = '/api/v1/integrations/connections';
      const call = async (method: string, path: string, body?: unknown) => {
        const r = await h.request(method, path, { session, ...(body !== undefined && { body }) });
        assert.ok(r.status < 300, `${method} ${path} answered ${r.status}: ${r.text}`);
      };
      await call('PATCH', `${connections}/${connection.id}`, {
        url: 'https://receiver.example.com/v2/orders',
      });
      await call('POST', `${connections}/${connection.id}/test`, {});
      await call('POST', `${connections}/${connection.id}/pause`);
      await call('POST', `${connections}/${connection.id}/resume`, {});
      await call('POST', '/api/v1/integrations/event-types', { name: 'order.paid' });
      // What the OAuth2 callback records when a person connects at a provider (src/oauth/authorize.ts),
      // written by the same writer: the provider's scopes are its own words, not hubgate's module:level.
      await recordAudit(
        h.database.kysely,
        { actorType: 'user', actorId: user.id, ip: '127.0.0.1', requestId: null, at: new Date() },
        {
          action: 'connection.authorize',
          tenantId: tenant.id,
          targetType: 'connection',
          targetId: connection.id,
          metadata: {
            connectorKey: 'oauth2:ledgerly',
            scopes: ['openid', 'api:read'],
            expiresAt: null,
            refreshToken: true,
          },
        },
      );

      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        await signInThroughUi(page, h.uiUrl, user, '/audit-log');
        const row = (words: string) => page.getByRole('row', { name: new RegExp(words) });
        const edit = row('Edited a connection');
        await visible(edit);
        await visible(edit.getByText('changed: URL'));
        assert.equal(
          await edit.getByText(/credentials:/).count(),
          0,
          'an edit is said as a credential binding',
        );

        const authorize = row('Connected a connection at its provider');
        await visible(authorize.getByText('scopes openid api:read'));
        assert.equal(
          await authorize.getByText(/openid: ;/).count(),
          0,
          'OAuth2 scopes are read as hubgate’s',
        );

        await visible(row('Sent a test event').getByText('event type hubgate.test'));
        await visible(row('Paused a connection').getByText('paused by hand'));
        await visible(row('Resumed a connection'));
        await visible(row('Added an event type').getByText('“order.paid”'));
        await visible(row('Bound credentials to a connection').getByText('credentials: signing secret'));

        // No action is left as its code (a dotted name like connection.update).
        const rows = page.getByRole('table').getByRole('row');
        const actions: string[] = [];
        // The first row is the header; each other's second cell starts with the action.
        for (let i = 1; i < (await rows.count()); i += 1)
          actions.push(
            ((await rows.nth(i).getByRole('cell').nth(1).innerText()).split('\n')[0] ?? '').trim(),
          );
        assert.ok(actions.length >= 8, `only ${actions.length} entries shown`);
        const raw = actions.filter((text) => /^[a-z_]+(\.[a-z_]+)+$/.test(text.trim()));
        assert.deepEqual(raw, [], `actions shown as codes: ${raw.join(', ')}`);

        await screenshot(page, 'audit-log-words');
        await assertNoSeriousViolations(page, 'the audit log in words');
        assertNoPageErrors(tp, 'the audit log in words');
      } finally {
        await tp.close();
      }
    },
  );
});

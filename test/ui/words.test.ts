import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  dueText,
  formatRelative,
  moduleName,
  overlapText,
  plural,
  roleName,
  scopeName,
  scopeSummary,
} from '../../ui/common/words.js';

// How the UI says times, durations and scopes (ui/common/words.ts). The words of relative times come from
// the runtime's Intl in the browser's language; what is checked here is the unit and the number chosen.
const NOW = Date.parse('2026-12-07T12:00:00Z');
const at = (offsetSeconds: number) => new Date(NOW + offsetSeconds * 1000).toISOString();
const said = (value: number, unit: Intl.RelativeTimeFormatUnit) =>
  new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' }).format(value, unit);

test('a relative time is said in the largest unit it reaches, rounded', () => {
  assert.equal(formatRelative(at(-180), NOW), said(-3, 'minute'), '3 minutes ago');
  assert.equal(formatRelative(at(-59), NOW), said(-59, 'second'), 'under a minute stays in seconds');
  assert.equal(formatRelative(at(90 * 60), NOW), said(2, 'hour'), '90 minutes ahead rounds to 2 hours');
  assert.equal(formatRelative(at(89 * 86_400), NOW), said(3, 'month'), '89 days ahead');
  assert.equal(formatRelative(at(-400 * 86_400), NOW), said(-1, 'year'), 'over a year ago');
  assert.equal(formatRelative(at(0), NOW), said(0, 'second'), 'this moment');
});

test('"Due": in so long when at least 5 seconds away, "shortly" when nearer or already past', () => {
  assert.equal(dueText(at(60), NOW), said(1, 'minute'), 'dueText(at(60), NOW)');
  assert.equal(dueText(at(5), NOW), said(5, 'second'), 'exactly 5 seconds away is still said');
  assert.equal(dueText(at(4), NOW), 'shortly', 'dueText(at(4), NOW)');
  assert.equal(dueText(at(-7), NOW), 'shortly', 'a retry is never due "7 seconds ago"');
});

test('an overlap of credentials is said in whole hours, else in minutes', () => {
  assert.equal(overlapText(3600), '1 hour', 'overlapText(3600)');
  assert.equal(overlapText(86_400), '24 hours', 'overlapText(86_400)');
  assert.equal(overlapText(1800), '30 minutes', 'overlapText(1800)');
  assert.equal(overlapText(60), '1 minute', 'overlapText(60)');
  assert.equal(overlapText(5400), '90 minutes', 'overlapText(5400)');
});

test('counts, roles, modules and scopes in words', () => {
  assert.equal(plural(1, 'key'), '1 key', 'plural(1, "key")');
  assert.equal(plural(2, 'key'), '2 keys', 'plural(2, "key")');
  assert.equal(plural(0, 'delivery', 'deliveries'), '0 deliveries', 'plural(0, "delivery", "deliveries")');
  assert.equal(roleName('COMPANY_IT_ADMIN'), 'Company IT admin', 'roleName("COMPANY_IT_ADMIN")');
  assert.equal(roleName('SOMETHING_NEW'), 'SOMETHING_NEW', 'an unknown role is shown as it is');
  assert.equal(moduleName('integration_hub'), 'Integration hub', 'moduleName("integration_hub")');
  assert.equal(scopeName('integrations:READER'), 'Integrations · Read', 'scopeName("integrations:READER")');
  assert.equal(
    scopeName('integration_hub:ADMIN'),
    'Integration hub · Administer',
    'scopeName("integration_hub:ADMIN")',
  );
  assert.equal(scopeName('legacy'), 'legacy', 'a scope without a level is shown as it is');
  assert.equal(
    scopeSummary(['integrations:READER', 'integrations:OPERATOR', 'integration_hub:READER']),
    'Integrations: Read, Operate; Integration hub: Read',
    'scopeSummary(["integrations:READER", "integrations:OPERATOR", "inte...',
  );
  assert.equal(scopeSummary([]), '', 'scopeSummary([])');
});

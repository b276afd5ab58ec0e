import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { worstEventType, worstEventTypePatterns } from '../../bench/patterns-inputs.js';
import { eventTypeMatches } from '../../src/connections/event-types.js';
import { publishEvent } from '../helpers/events.js';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';

const CONNECTIONS = '/api/v1/integrations/connections';
const HOOK_URL = 'https://hooks.example.com/hubgate';

describe('eventTypes matching', () => {
  test('`*` stands for any run of characters, dots included; everything else is literal', () => {
    const cases: Array<[string, string, boolean]> = [
      ['employee.created', 'employee.created', true],
      ['employee.created', 'employee.created.x', false],
      ['employee.created', 'employee_created', false],
      ['employee.*', 'employee.created', true],
      ['employee.*', 'employee.contract.signed', true],
      ['employee.*', 'employee.', true],
      ['employee.*', 'employee', false],
      ['employee.*', 'employeeXcreated', false],
      ['*.created', 'employee.created', true],
      ['*.created', 'created', false],
      ['*', 'anything.at-all_9', true],
      ['**', 'a', true],
      ['a*b*c', 'abc', true],
      ['a*b*c', 'aXbYc', true],
      ['a*b*c', 'acb', false],
      ['a*a', 'a', false],
      ['a*a', 'aa', true],
      ['*a*a*a*b', 'aaab', true],
      ['*a*a*a*b', 'aab', false],
      ['*ab*ab', 'abab', true],
      ['*ab*ab', 'aabab', true],
      ['*ab*ab', 'abba', false],
      ['a.*-b', 'a.x-b', true],
      ['a.*-b', 'aXx-b', false],
    ];
    for (const [pattern, type, expected] of cases) {
      assert.equal(eventTypeMatches([pattern], type), expected, `${pattern} vs ${type}`);
    }
    assert.equal(eventTypeMatches(undefined, 'x'), true, 'no patterns: every type');
    assert.equal(eventTypeMatches(['a', 'b.*'], 'b.c'), true, 'any pattern of the list');
    assert.equal(
      eventTypeMatches(['a', 'b.*'], 'c'),
      false,
      'a type matching none of the patterns is delivered',
    );
  });

  test('the worst allowed set (20 patterns of 100 characters) against a 100-character type: well under a millisecond', () => {
    const patterns = worstEventTypePatterns();
    const type = worstEventType();
    assert.equal(patterns.length, 20, 'the worst allowed set does not have 20 patterns');
    assert.ok(
      patterns.every((p) => p.length === 100 && /^[a-z0-9_.*-]+$/.test(p)),
      'the worst allowed set has a pattern that is not 100 allowed characters',
    );
    assert.equal(type.length, 100, 'the worst-case type is not 100 characters');
    assert.equal(
      eventTypeMatches(patterns, type),
      false,
      'the worst-case type matches the worst allowed set',
    );
    const runs = 1_000;
    const started = performance.now();
    for (let i = 0; i < runs; i++) eventTypeMatches(patterns, type);
    const average = (performance.now() - started) / runs;
    // A backtracking matcher needs seconds for one run of these; a linear one microseconds. The
    // bound is generous so that a loaded machine cannot make it flake.
    assert.ok(average < 5, `${average.toFixed(3)} ms per evaluation`);
  });
});

describe('eventTypes through HTTP', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  test('a connection with a pattern built to backtrack: publishing the type it chokes on answers at once', async () => {
    const { session } = await makeSignedInTenant(h);
    // With a backtracking RegExp this pattern against `a`×100 blocked the event loop for 13 s.
    await makeWebhookConnection(h, session, HOOK_URL, { eventTypes: ['*a*a*a*a*a*b'] });
    const publish = (type: string) => publishEvent(h, session, { type });

    const started = performance.now();
    const missed = await publish('a'.repeat(100));
    const elapsed = performance.now() - started;
    assert.equal(missed.status, 202, missed.text);
    assert.equal(missed.body.deliveries, 0, 'an event of a type the pattern does not match is delivered');
    assert.ok(elapsed < 2_000, `publish took ${elapsed.toFixed(0)} ms`);

    const hit = await publish(`${'a'.repeat(99)}b`);
    assert.equal(hit.body.deliveries, 1, hit.text);
  });

  test('the worst allowed set of patterns is accepted, and publishing against it is quick', async () => {
    const { session } = await makeSignedInTenant(h);
    await makeWebhookConnection(h, session, HOOK_URL, { eventTypes: worstEventTypePatterns() });
    const started = performance.now();
    const r = await h.request('POST', '/api/v1/integrations/events', {
      session,
      body: { type: worstEventType(), data: {} },
    });
    const elapsed = performance.now() - started;
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.deliveries, 0, 'an event matching none of the worst allowed patterns is delivered');
    assert.ok(elapsed < 2_000, `publish took ${elapsed.toFixed(0)} ms`);
  });

  test('more than 20 patterns, a pattern over 100 characters or outside [a-z0-9_.-*]: 400 naming the field', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const many = Array.from({ length: 21 }, (_, i) => `type${i}.*`);
    const bodies: Array<[string, Record<string, unknown>, string]> = [
      ['21 patterns (webhook)', { connectorKey: 'webhook', url: HOOK_URL, eventTypes: many }, 'eventTypes'],
      ['21 patterns (http)', { connectorKey: 'http', url: HOOK_URL, eventTypes: many }, 'eventTypes'],
      ['21 patterns (slack)', { connectorKey: 'slack', eventTypes: many }, 'eventTypes'],
      ['101 characters', { connectorKey: 'slack', eventTypes: ['a'.repeat(101)] }, 'eventTypes.0'],
      ['empty pattern', { connectorKey: 'slack', eventTypes: [''] }, 'eventTypes.0'],
      ['upper case', { connectorKey: 'slack', eventTypes: ['a', 'Employee.*'] }, 'eventTypes.1'],
      ['question mark', { connectorKey: 'slack', eventTypes: ['employee.?'] }, 'eventTypes.0'],
      ['brackets', { connectorKey: 'slack', eventTypes: ['employee.[a-z]'] }, 'eventTypes.0'],
      ['regex syntax', { connectorKey: 'slack', eventTypes: ['(a+)+'] }, 'eventTypes.0'],
      ['space', { connectorKey: 'slack', eventTypes: ['a b'] }, 'eventTypes.0'],
      ['duplicates', { connectorKey: 'slack', eventTypes: ['a.*', 'a.*'] }, 'eventTypes'],
      ['empty list', { connectorKey: 'slack', eventTypes: [] }, 'eventTypes'],
    ];
    for (const [name, body, path] of bodies) {
      const r = await h.request('POST', CONNECTIONS, { session, body: { displayName: 'x', ...body } });
      assert.equal(r.status, 400, `${name}: ${r.text}`);
      assert.equal(r.body.code, 'validation_failed', name);
      assert.ok(
        r.body.errors.some((e: { path: string }) => e.path === path),
        `${name}: expected an error at ${path}, got ${JSON.stringify(r.body.errors)}`,
      );
    }
    const rows = await h.database.kysely
      .selectFrom('connections')
      .select('id')
      .where('tenant_id', '=', tenant.id)
      .execute();
    assert.equal(rows.length, 0, 'refused connection requests stored a connection');

    const twenty = await h.request('POST', CONNECTIONS, {
      session,
      body: { connectorKey: 'slack', displayName: 'x', eventTypes: many.slice(0, 20) },
    });
    assert.equal(twenty.status, 201, twenty.text);
  });
});

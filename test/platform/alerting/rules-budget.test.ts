import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RE2JS } from 're2js';
import { costliestRoutingRegexes, longRoutingRegexRules } from '../../../bench/patterns-inputs.js';
import { newId } from '../../../src/crypto/ids.js';
import { programSizeBound } from '../../../src/platform/alerting/program-size.js';
import { startHarness, type Harness } from '../../helpers/harness.js';

const PATH = '/api/v1/platform/alerting/rules';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const put = (rules: unknown[]) =>
  h.request('PUT', PATH, {
    token: h.platformToken,
    body: { defaults: { channelIds: [], repeatIntervalSeconds: 3600 }, rules },
  });

/** A distinct prefix per call, so that no pattern is already compiled and cached. */
const salt = () => newId('rul').slice(4, 12);

/** Probes /healthz until `work` settles; returns its result and the slowest probe, in ms. */
async function probeDuring<T>(work: Promise<T>): Promise<{ result: T; slowest: number; probes: number }> {
  let done = false;
  void work.finally(() => {
    done = true;
  });
  let slowest = 0;
  let probes = 0;
  while (!done) {
    const started = performance.now();
    const health = await h.request('GET', '/healthz');
    assert.equal(health.status, 200, 'the service stops answering health checks while rules compile');
    slowest = Math.max(slowest, performance.now() - started);
    probes += 1;
  }
  return { result: await work, slowest, probes };
}

async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
}

describe('alert routing rules: the cost of compiling a document is bounded before compiling', () => {
  test("the review's document of 760 long invalid expressions: one 400, at once, naming the first", async () => {
    // Took 38 s (33 s of CPU) and slowed every other request while it parsed them all.
    const rules = longRoutingRegexRules(38, false, salt());
    const { result: response, ms } = await timed(() => put(rules));
    assert.equal(response.status, 400, response.text);
    assert.equal(
      response.body.code,
      'validation_failed',
      'the long invalid expressions are refused for another reason than validation',
    );
    assert.equal(response.body.errors.length, 1, 'one refusal is enough');
    assert.equal(
      response.body.errors[0].path,
      'rules.0.matchers.0.value',
      'the refusal does not name the first expression',
    );
    assert.match(
      response.body.errors[0].message,
      /RE2/,
      'the refusal does not say the expression is not RE2',
    );
    assert.ok(ms < 5_000, `answered after ${ms.toFixed(0)} ms`);
  });

  test("the same document with valid expressions: 400 at the document's bound, before compiling them", async () => {
    // Took 6.9 s: 150 of them compiled before the instruction bound refused the next.
    const rules = longRoutingRegexRules(38, true, salt());
    const { result: response, ms } = await timed(() => put(rules));
    assert.equal(response.status, 400, response.text);
    assert.equal(response.body.errors.length, 1, response.text);
    assert.match(
      response.body.errors[0].message,
      /6000 characters/,
      "the valid expressions are not refused at the document's 6000-character bound",
    );
    assert.ok(ms < 5_000, `answered after ${ms.toFixed(0)} ms`);
  });

  test('one short expression with a long program is refused before it is compiled', async () => {
    // 310 characters, 100,000 instructions: about a second of compiling in one block.
    const value = `${salt()}(?:${'\\pL'.repeat(100)}){1000}`;
    const { result: response, ms } = await timed(() =>
      put([{ name: 'r', matchers: [{ name: 'tenantId', op: '=~', value }], channelIds: [] }]),
    );
    assert.equal(response.status, 400, response.text);
    assert.equal(
      response.body.errors[0].path,
      'rules.0.matchers.0.value',
      'the costly expression is refused on another field',
    );
    assert.match(
      response.body.errors[0].message,
      /more than 2000 RE2 instructions/,
      'the costly expression is not refused for its RE2 program size',
    );
    assert.ok(ms < 500, `answered after ${ms.toFixed(0)} ms`);
  });

  test('the costliest document allowed is accepted, and other requests answer quickly meanwhile', async () => {
    const values = costliestRoutingRegexes(salt());
    const matchers = values.map((value) => ({ name: 'tenantId', op: '=~', value }));
    const rules = Array.from({ length: Math.ceil(matchers.length / 20) }, (_, r) => ({
      name: `costly ${r}`,
      matchers: matchers.slice(r * 20, r * 20 + 20),
      channelIds: [],
    }));
    const { result: saved, slowest, probes } = await probeDuring(put(rules));
    assert.equal(saved.status, 200, saved.text);
    assert.ok(probes > 1, `${probes} probes`);
    // Compiling is sliced into ~10 ms steps; the bound leaves room for two cores shared with a
    // browser test in the same run (unsliced, a probe waited the whole compile: seconds).
    assert.ok(slowest < 1_500, `a request waited ${slowest.toFixed(0)} ms`);
  });

  /** The program's size, or undefined when RE2 refuses the expression (nested repeats over 1000). */
  const programSize = (value: string): number | undefined => {
    try {
      return RE2JS.compile(value).programSize();
    } catch {
      return undefined;
    }
  };

  test('the bound is never below the program RE2 compiles', () => {
    const atoms = [
      'a',
      '\\pL',
      '\\p{Greek}',
      '.',
      '[a-z]',
      '[]a]',
      '[^\\]]',
      '[[:alpha:]]',
      '\\x{41}',
      '\\Q(a\\E',
    ];
    const wrappers = [(s: string) => s, (s: string) => `(${s})`, (s: string) => `(?:${s}|b)`];
    const repeats = ['', '*', '+?', '{3}', '{2,9}', '{4,}', '{0,1000}'];
    for (const atom of atoms) {
      for (const wrap of wrappers) {
        for (const outer of repeats) {
          for (const inner of repeats.slice(0, 5)) {
            const value = `(?i)x${wrap(`${atom}${inner}`)}${outer}y`;
            const size = programSize(value);
            if (size === undefined) continue;
            assert.ok(programSizeBound(value) >= size, `${value}: ${programSizeBound(value)} < ${size}`);
          }
        }
      }
    }
  });
});

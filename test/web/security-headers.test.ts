import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import helmet from '@fastify/helmet';
import Fastify, { type FastifyInstance } from 'fastify';
import { CSP_DIRECTIVES } from '../../src/http/security-policy.js';
import { registerSecurityHeaders } from '../../src/web/security-headers.js';

/** What @fastify/helmet was given when it set these headers for every request. */
function helmetOptions(publicUrl: URL) {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: Object.fromEntries(Object.entries(CSP_DIRECTIVES).map(([name, list]) => [name, [...list]])),
    },
    frameguard: { action: 'deny' as const },
    referrerPolicy: { policy: 'no-referrer' as const },
    hsts: publicUrl.protocol === 'https:' ? { maxAge: 180 * 24 * 60 * 60, includeSubDomains: false } : false,
  };
}

/** The header calls made on the response of one request, in order, spelled as made. */
async function headerCalls(
  register: (app: FastifyInstance) => PromiseLike<unknown> | void,
): Promise<string[]> {
  const app = Fastify();
  const calls: string[] = [];
  app.addHook('onRequest', (_request, reply, done) => {
    const raw = reply.raw;
    const set = raw.setHeader.bind(raw);
    const remove = raw.removeHeader.bind(raw);
    raw.setHeader = (name, value) => {
      calls.push(`${name}: ${String(value)}`);
      return set(name, value);
    };
    raw.removeHeader = (name) => {
      calls.push(`remove ${name}`);
      remove(name);
    };
    done();
  });
  await register(app);
  app.get('/', async () => ({ ok: true }));
  await app.inject({ method: 'GET', url: '/' });
  await app.close();
  // helmet also removes X-Powered-By, which nothing here ever sets.
  return calls.filter((call) => call !== 'remove X-Powered-By');
}

for (const origin of ['http://localhost:3000', 'https://hub.example.com']) {
  test(`the security headers are helmet's, spelled and ordered alike (${origin})`, async () => {
    const publicUrl = new URL(origin);
    const expected = await headerCalls((app) => app.register(helmet, helmetOptions(publicUrl)));
    const actual = await headerCalls((app) => registerSecurityHeaders(app, publicUrl));
    assert.ok(
      expected.length >= 11,
      'helmet sets fewer headers than it should: the comparison proves little',
    );
    assert.deepEqual(actual, expected, "our security headers differ from helmet's in name, value or order");
  });
}

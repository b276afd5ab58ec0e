import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { routeText, routeUrl, withQuery } from '../../ui/common/api.js';
import { routes, type RouteSpec } from '../../ui/common/routes.js';

// The UI's one table of API routes (ui/common/routes.ts) and how a call's URL is made from an entry.
const entries = Object.entries(routes).flatMap(([feature, table]) =>
  Object.entries(table as Record<string, RouteSpec>).map(([name, spec]) => ({
    name: `${feature}.${name}`,
    spec,
  })),
);

test('every entry of the route table is a method and an API path with named parameters', () => {
  assert.ok(entries.length > 50, `only ${entries.length} routes in the table`);
  for (const { name, spec } of entries) {
    assert.ok(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(spec.method), `${name}: ${spec.method}`);
    assert.match(spec.path, /^\/api\/v1(\/(:[A-Za-z]+|[a-z0-9._-]+))+\/?$/, `${name}: ${spec.path}`);
    assert.ok(
      spec.auth === undefined || ['session', 'optional', 'platform'].includes(spec.auth),
      `${name}: ${spec.auth}`,
    );
    if (spec.method === 'GET' || spec.method === 'DELETE')
      assert.equal(spec.body, undefined, `${name}: a ${spec.method} with a body`);
  }
});

test('no route is in the table twice under two names', () => {
  const seen = new Map<string, string>();
  for (const { name, spec } of entries) {
    const key = routeText(spec);
    assert.equal(seen.get(key), undefined, `${key} is both ${seen.get(key)} and ${name}`);
    seen.set(key, name);
  }
});

test("platform routes are the operator console's, called with its key", () => {
  for (const { name, spec } of entries) {
    if (spec.path.startsWith('/api/v1/platform/'))
      assert.equal(spec.auth, 'platform', `${name}: ${spec.path} is not called with the platform key`);
  }
});

test("a call's URL: parameters filled in and encoded, empty query values left out", () => {
  const route = {
    method: 'GET',
    path: '/api/v1/integrations/connections/:id/deliveries',
    answer: undefined,
  } as const;
  assert.equal(
    routeUrl(route, { params: { id: 'con/1 2' }, query: { status: 'failed', cursor: null, eventType: '' } }),
    '/api/v1/integrations/connections/con%2F1%202/deliveries?status=failed',
    'routeUrl(route, { params: { id: "con/1 2" }, query: { status: "fail...',
  );
  assert.throws(() => routeUrl(route), /no value for :id/, 'a missing parameter is not sent as ":id"');
  assert.equal(
    withQuery('/x', { a: 0, b: false, c: undefined }),
    '/x?a=0&b=false',
    'withQuery("/x", { a: 0, b: false, c: undefined })',
  );
  assert.equal(routeText(route), 'GET /api/v1/integrations/connections/:id/deliveries', 'routeText(route)');
});

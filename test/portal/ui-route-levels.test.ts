import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { routes, type RouteSpec } from '../../ui/common/routes.js';
import { startHarness, type Harness } from '../helpers/harness.js';

// The portal page hides what its session cannot do from the UI's route table (ui/common/routes.ts
// `portal`, read by ui/common/viewer.ts); the server's rules decide (`portal:` of each route's rule).
// The two must say the same of every route the UI calls, or the page offers a button the token is
// refused for, or hides one it may use.

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

/** The least portal access each declared route opens, by "METHOD /path"; absent: closed to portals. */
function serverLevels(): Map<string, string> {
  const levels = new Map<string, string>();
  for (const route of h.app.declaredRoutes) {
    const { access } = route;
    const level =
      access.class === 'portal'
        ? 'read'
        : access.class === 'tenant' || access.class === 'session'
          ? access.portal
          : undefined;
    if (level) levels.set(`${route.method} ${route.url}`, level);
  }
  return levels;
}

test("every route of the UI's table names the portal access the server's rule opens it to", () => {
  const server = serverLevels();
  const entries = Object.entries(routes).flatMap(([feature, table]) =>
    Object.entries(table as Record<string, RouteSpec>).map(([name, spec]) => ({
      name: `${feature}.${name}`,
      spec,
    })),
  );
  let portalRoutes = 0;
  for (const { name, spec } of entries) {
    const key = `${spec.method} ${spec.path.replace(/\/$/, '')}`;
    const declared = server.get(key) ?? server.get(`${spec.method} ${spec.path}`);
    assert.equal(
      spec.portal,
      declared,
      `${name} (${key}): the UI says ${spec.portal}, the server ${declared}`,
    );
    if (declared) portalRoutes += 1;
  }
  // The §20 table: read 7 (+ the session), operate 6 more, manage 4 more; the UI calls all but a few.
  assert.ok(portalRoutes >= 14, `only ${portalRoutes} portal routes in the UI's table`);
});

// Who is looking at the pages the tenant UI and the portal page share (connections, a connection's
// event log, a delivery): what they may do there, and at which address each page is. In the tenant
// UI the person's role decides, as it always did; on the portal page (docs/api/portal.md) the portal
// session's access, through the same table of routes the server's rules declare (routes.ts `portal`).
import { signal } from '@preact/signals';
import { setPageBase } from './paths.js';
import { routes, type PortalLevel, type RouteSpec } from './routes.js';
import { session } from './session.js';

/** The portal session's access while the portal page runs; null in the tenant UI. */
export const portalAccess = signal<PortalLevel | null>(null);

export { pageUrl } from './paths.js';

/** The portal page starts: its pages are under `/portal/<tenantId>`, and its access decides. */
export function enterPortal(tenantId: string, access: PortalLevel): void {
  setPageBase(`/portal/${encodeURIComponent(tenantId)}`);
  portalAccess.value = access;
}

const RANK: Record<PortalLevel, number> = { read: 0, operate: 1, manage: 2 };

/**
 * Whether the viewer's credential may call `route` at all. On the portal page, exactly the §20 table
 * (a route the portal never calls has no `portal` level); in the tenant UI, true: the role decides,
 * and the server says so when it does not allow it.
 */
export function reaches(route: RouteSpec): boolean {
  const access = portalAccess.value;
  if (access === null) return true;
  return route.portal !== undefined && RANK[route.portal] <= RANK[access];
}

/** Test, pause, resume, recover, retry, edit: anyone but a MEMBER; a portal session of `operate` or more. */
export const mayOperate = (): boolean =>
  portalAccess.value === null ? session.value?.user.role !== 'MEMBER' : reaches(routes.connections.pause);

/**
 * Create, bind credentials, authorize, revoke: in the tenant UI whoever may operate (the server
 * checks the role of each); on the portal page a session of `manage`.
 */
export const mayManage = (): boolean =>
  portalAccess.value === null ? mayOperate() : reaches(routes.connections.create);

// Where the pages the tenant UI and the portal page share are (viewer.ts): at the root of the tenant
// UI, under `/portal/<tenantId>` on the portal page. Kept apart from viewer.ts, which reads the
// signed-in session, so that the link builders stay plain functions (test/ui/).

let pageBase = '';

/** Set once by the portal page as it starts (viewer.ts `enterPortal`). */
export function setPageBase(base: string): void {
  pageBase = base;
}

/** A shared page's address (`/connections/…`) in the UI that shows it. */
export const pageUrl = (path: string): string => pageBase + path;

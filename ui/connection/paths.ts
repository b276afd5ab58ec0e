// Where a connection lives: in the API, and in the UI (its page and its deliveries' pages).
import { withQuery } from '../api.js';
import { filterQuery, type LogFilters } from './logFilters.js';

/** The connection's API path, `/api/v1/integrations/connections/:id`. */
export const connectionApi = (id: string): string =>
  `/api/v1/integrations/connections/${encodeURIComponent(id)}`;

/** The connection's page (its event log), with the log's filters and page if any. */
export const connectionPage = (id: string, filters?: LogFilters, cursor?: string | null): string =>
  withQuery(`/connections/${encodeURIComponent(id)}/events`, {
    ...(filters ? filterQuery(filters) : {}),
    cursor,
  });

/** One delivery's page; it carries the log's filters, so that "back" returns to the same list. */
export const deliveryPage = (id: string, deliveryId: string, back: Record<string, string> = {}): string =>
  withQuery(`/connections/${encodeURIComponent(id)}/events/${encodeURIComponent(deliveryId)}`, back);

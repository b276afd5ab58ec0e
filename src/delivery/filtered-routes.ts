import { Type } from 'typebox';
import { tenantRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { PageQueryFields } from '../http/pagination.js';
import { IdParams, Nullable, StrictObject } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { connectionFilteredEvents, RECENT_FILTERED } from './filtered.js';

const FilteredEventSchema = Type.Object({
  eventId: Type.String(),
  eventType: Type.String(),
  createdAt: Type.String({
    format: 'date-time',
    description: 'when the event was published (RFC 3339, UTC)',
  }),
});

export const FilteredEventsAnswer = Type.Object({
  data: Type.Array(FilteredEventSchema, {
    description: `the most recent events the filter dropped, newest first: at most ${RECENT_FILTERED}, within delivery retention`,
  }),
  nextCursor: Nullable(Type.String()),
  total: Type.Integer({ minimum: 0, description: 'every event the filter dropped since `since`' }),
  since: Nullable(Type.String({ format: 'date-time', description: 'when the first of them was published' })),
  lastAt: Nullable(Type.String({ format: 'date-time', description: 'when the last of them was published' })),
});

/**
 * The events a connection's payload filter dropped (docs/api/events.md, Filtered events). Sessions
 * only: the automation allowlist (docs/api/authentication.md) is a closed list, as for the filter
 * test (docs/decisions/0067-filtered-events-and-ordering-key-shown.md).
 */
export const filteredRoutes: RoutePlugin = async (app, deps) => {
  app.get(
    '/api/v1/integrations/connections/:id/filtered-events',
    {
      config: {
        ...tenantRule('integrations', 'READER', { automation: false }),
      },
      schema: {
        tags: ['events'],
        summary: "The events the connection's payload filter dropped, newest first, with their count",
        params: IdParams,
        querystring: StrictObject(PageQueryFields),
        response: { 200: FilteredEventsAnswer },
      },
    },
    async (request) =>
      connectionFilteredEvents(deps, requestScope(request), request.params.id, request.query),
  );
};

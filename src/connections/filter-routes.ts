import { Type } from 'typebox';
import { tenantRule } from '../access/rules.js';
import { StrictObject } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { EVENT_TYPE_PATTERN } from './event-types.js';
import { ACTUAL_TYPES, explainFilter } from './filter-match.js';
import { checkFilter, FILTER_OPERATORS, type Filter } from './filter.js';

const SampleEvent = StrictObject(
  {
    type: Type.String({ pattern: EVENT_TYPE_PATTERN }),
    data: Type.Record(Type.String(), Type.Unknown(), { description: "the event's data, as published" }),
    id: Type.Optional(Type.String({ maxLength: 100, description: 'default evt_sample' })),
    timestamp: Type.Optional(Type.String({ format: 'date-time', description: 'default now' })),
  },
  { description: 'a sample event, as published; id and timestamp stand in for those hubgate assigns' },
);

export const FilterTestBody = StrictObject({
  filter: Type.Union([Type.Record(Type.String({ minLength: 1 }), Type.Unknown()), Type.Null()], {
    description: 'a filter as a connection holds it (docs/api/connections.md); null passes every event',
  }),
  event: SampleEvent,
});

const FilterFailureSchema = Type.Object({
  filterPath: Type.String({ description: 'JSON Pointer to the condition in the filter' }),
  path: Type.String({ description: 'the dotted path into the delivered body' }),
  operator: Type.Enum(['equals', ...FILTER_OPERATORS], { description: 'equals: a plain value' }),
  expected: Type.Unknown(),
  actualType: Type.Enum(ACTUAL_TYPES),
  actual: Type.Unknown({
    description: 'the value found: a number, boolean, null or a string of at most 200 characters; else null',
  }),
});

export const FilterTestAnswer = Type.Object({
  matches: Type.Boolean({ description: 'a connection with this filter would get the event' }),
  failed: Type.Array(FilterFailureSchema, {
    description: 'each condition that did not hold (none from an $any branch when another branch matched)',
  }),
});

/**
 * Trying a filter on a sample event (docs/api/connections.md): what the web UI's filter editor shows,
 * and how a tenant learns why a connection got no delivery of an event. It saves nothing and sends
 * nothing. Sessions only: docs/api/authentication.md's allowlist is closed.
 */
export const filterRoutes: RoutePlugin = async (app) => {
  app.post(
    '/api/v1/integrations/filter-test',
    {
      config: {
        ...tenantRule('integrations', 'READER', { automation: false }),
      },
      schema: {
        tags: ['connections'],
        summary: 'Evaluate a payload filter against a sample event, with each condition that failed',
        body: FilterTestBody,
        response: { 200: FilterTestAnswer },
      },
    },
    async (request) => {
      const { filter, event } = request.body;
      checkFilter(filter);
      if (filter === null) return { matches: true, failed: [] };
      const body = {
        id: event.id ?? 'evt_sample',
        type: event.type,
        timestamp: event.timestamp ?? new Date().toISOString(),
        data: event.data,
      };
      return explainFilter(filter as Filter, body);
    },
  );
};

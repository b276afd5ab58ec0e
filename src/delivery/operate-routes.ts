import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { tenantRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { EVENT_TYPE_PATTERN } from '../connections/event-types.js';
import { IdParams, StrictObject, Timestamp } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { MAX_RECOVERED } from './control.js';
import { RECOVER_WINDOW_DAYS, recoverDeliveries, sendTestEvent, TEST_EVENT_TYPE } from './operate.js';

const operator = tenantRule('integrations', 'OPERATOR', { portal: 'operate' });
const tags = ['events'];

/** The body of `POST …/connections/:id/recover`: the time range and the statuses to send again. */
export const RecoverBody = StrictObject({
  since: Timestamp,
  until: Type.Optional(Timestamp),
  statuses: Type.Optional(
    Type.Array(Type.Union([Type.Literal('failed'), Type.Literal('skipped')]), {
      minItems: 1,
      maxItems: 2,
      uniqueItems: true,
      default: ['failed'],
    }),
  ),
});
export const RecoverAnswer = Type.Object({ queued: Type.Integer({ minimum: 0, maximum: MAX_RECOVERED }) });

/** The body of `POST …/connections/:id/test`, itself optional: the event's type and data. */
export const TestEventBody = Type.Optional(
  StrictObject({
    type: Type.Optional(Type.String({ pattern: EVENT_TYPE_PATTERN })),
    data: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'a JSON object of at most 256 KiB',
      }),
    ),
  }),
);
export const TestEventAnswer = Type.Object({ eventId: Type.String(), deliveryId: Type.String() });

/** Recovering deliveries and sending test events (docs/api/events.md). */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const operateRoutes: RoutePlugin = async (app, deps) => {
  const { announce } = deps;
  app.post(
    '/api/v1/integrations/connections/:id/recover',
    {
      config: {
        ...operator,
        openapi: { problems: ['conflict'] },
        mcp: {
          tool: 'recover_deliveries',
          params: { id: 'connectionId' },
          annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
        },
      },
      schema: {
        tags,
        summary: 'Send failed (or skipped) deliveries of a time range again',
        description:
          `Every delivery of the connection created in [since, until) with one of \`statuses\` goes back ` +
          `to pending, oldest first, same IDs, attempts kept; at most ${MAX_RECOVERED} per call (call ` +
          `again from the last one's time for more). \`since\` at most ${RECOVER_WINDOW_DAYS} days ago. ` +
          'Active connections only.',
        params: IdParams,
        body: RecoverBody,
        response: { 202: RecoverAnswer },
      },
    },
    async (request, reply) => {
      const origin = auditOrigin(request, deps.ctx.now());
      const answer = await recoverDeliveries(
        deps,
        requestScope(request),
        origin,
        request.params.id,
        request.body,
      );
      if (answer.queued > 0) announce();
      return reply.code(202).send(answer);
    },
  );

  app.post(
    '/api/v1/integrations/connections/:id/test',
    {
      config: {
        ...operator,
        openapi: { problems: ['conflict', 'quota_exceeded'] },
        mcp: {
          tool: 'send_test_event',
          params: { id: 'connectionId' },
          annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
        },
      },
      schema: {
        tags,
        summary: 'Send a test event to this connection alone',
        description:
          `A real event (type \`${TEST_EVENT_TYPE}\` unless given), signed and sent like any other, whatever ` +
          "the connection's eventTypes; its delivery shows in the log with `test: true`. Needs delivery " +
          'enabled (active, credentials bound).',
        params: IdParams,
        body: TestEventBody,
        response: { 202: TestEventAnswer },
      },
    },
    async (request, reply) => {
      const origin = auditOrigin(request, deps.ctx.now());
      const answer = await sendTestEvent(
        deps,
        requestScope(request),
        origin,
        request.params.id,
        request.body ?? {},
      );
      announce();
      return reply.code(202).send(answer);
    },
  );
};

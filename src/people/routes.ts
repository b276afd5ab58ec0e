import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { auditOrigin } from '../access/audit.js';
import { KEY_MANAGING_ROLES } from '../access/catalog.js';
import { sessionOf } from '../access/principal.js';
import { requestScope } from '../access/scope.js';
import { PageQueryFields } from '../http/pagination.js';
import { IdParams, NoContent, StrictObject } from '../http/schemas.js';
import { ChangeRoleBody, CompanyUser, CompanyUserList, InvitedUser, InviteUserBody } from './schemas.js';
import {
  changeRole,
  invitePerson,
  listPeople,
  reinvitePerson,
  removePerson,
  type PeopleDeps,
} from './users.js';

// Signed-in people of the roles that manage keys; never an automation key (`route_not_allowed`).
const people = { access: { class: 'session', roles: KEY_MANAGING_ROLES } } as const;
const tags = ['people'];

/** The tenant's people (docs/api/people.md): list, invite, change a role, remove. */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export function peopleRoutes(deps: PeopleDeps): FastifyPluginAsyncTypebox {
  const { ctx } = deps;
  // eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
  return async (app) => {
    app.get(
      '/api/v1/company/users',
      {
        config: people,
        schema: {
          tags,
          summary: "The tenant's people, newest first",
          querystring: StrictObject(PageQueryFields),
          response: { 200: CompanyUserList },
        },
      },
      async (request) => listPeople(ctx, requestScope(request), request.query),
    );

    app.post(
      '/api/v1/company/users',
      {
        config: { ...people, openapi: { problems: ['conflict'] } },
        schema: {
          tags,
          summary: 'Invite a person: the invitation link is returned once',
          description:
            'The person is `invited` until they accept the link (7 days, single use), which is e-mailed ' +
            'to them as well when the hub has SMTP_URL. An e-mail address in use, invited or not, is ' +
            '409. Only a PLATFORM_ADMIN may invite a PLATFORM_ADMIN (403 role_forbidden).',
          body: InviteUserBody,
          response: { 201: InvitedUser },
        },
      },
      async (request, reply) => {
        const invited = await invitePerson(
          deps,
          requestScope(request),
          auditOrigin(request, ctx.now()),
          sessionOf(request.principal),
          request.body,
        );
        return reply.code(201).send(invited);
      },
    );

    app.post(
      '/api/v1/company/users/:id/invitation',
      {
        config: { ...people, openapi: { problems: ['conflict'] } },
        schema: {
          tags,
          summary: 'A new invitation link for a person who has not accepted yet',
          description:
            'The link made before stops working. A person who has accepted already is 409. Returned once.',
          params: IdParams,
          response: { 201: InvitedUser },
        },
      },
      async (request, reply) => {
        const invited = await reinvitePerson(
          deps,
          requestScope(request),
          auditOrigin(request, ctx.now()),
          sessionOf(request.principal),
          request.params.id,
        );
        return reply.code(201).send(invited);
      },
    );

    app.patch(
      '/api/v1/company/users/:id',
      {
        config: { ...people, openapi: { problems: ['conflict'] } },
        schema: {
          tags,
          summary: "Change a person's role",
          description:
            'Only a PLATFORM_ADMIN may make a PLATFORM_ADMIN or change the role of one (403 role_forbidden). ' +
            "Demoting the tenant's last active person who can manage keys is 409.",
          params: IdParams,
          body: ChangeRoleBody,
          response: { 200: CompanyUser },
        },
      },
      async (request) =>
        changeRole(
          ctx,
          requestScope(request),
          auditOrigin(request, ctx.now()),
          sessionOf(request.principal),
          request.params.id,
          request.body.role,
        ),
    );

    app.delete(
      '/api/v1/company/users/:id',
      {
        config: { ...people, openapi: { problems: ['conflict'] } },
        schema: {
          tags,
          summary: 'Remove a person: their sessions end at once',
          description:
            "Removing the tenant's last active person who can manage keys is 409. Only a PLATFORM_ADMIN " +
            'may remove a PLATFORM_ADMIN (403 role_forbidden).',
          params: IdParams,
          response: { 204: NoContent },
        },
      },
      async (request, reply) => {
        await removePerson(
          ctx,
          requestScope(request),
          auditOrigin(request, ctx.now()),
          sessionOf(request.principal),
          request.params.id,
        );
        return reply.code(204).send(null);
      },
    );
  };
}

import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { KEY_MANAGING_ROLES } from '../access/catalog.js';
import { sessionOf } from '../access/principal.js';
import { platformRule, sessionRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { PageQueryFields } from '../http/pagination.js';
import { IdParams, NoContent, StrictObject } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { platformScopeFor } from '../tenants/tenants.js';
import { ChangeRoleBody, CompanyUser, CompanyUserList, InvitedUser, InviteUserBody } from './schemas.js';
import {
  changeRole,
  invitePerson,
  listPeople,
  reinvitePerson,
  removePerson,
  removePersonByOperator,
} from './users.js';

// Signed-in people of the roles that manage keys; never an automation key (`route_not_allowed`).
const people = sessionRule(KEY_MANAGING_ROLES);
const tags = ['people'];
// A platform key only (`platform_key_required` for anything else), as every platform route.
const platform = platformRule();
const platformTags = ['platform: tenants'];

const TenantUserParams = StrictObject({
  id: Type.String({ description: "The tenant's ID" }),
  userId: Type.String({ description: "The person's ID" }),
});

/**
 * The tenant's people (docs/api/people.md): list, invite, change a role, remove; and the platform
 * operator's list and removal of a tenant's people (docs/api/platform.md).
 */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const peopleRoutes: RoutePlugin = async (app, deps) => {
  const { ctx } = deps;
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
      config: { ...people, openapi: { problems: ['conflict', 'rate_limited'] } },
      schema: {
        tags,
        summary: 'Invite a person: the invitation link is returned once',
        description:
          'The person is `invited` until they accept the link (7 days, single use), which is e-mailed ' +
          'to them as well when the hub has SMTP_URL. An invitation reserves nothing: other tenants may ' +
          'invite the address too, and the first link accepted makes the user (the others then answer ' +
          '401). An address an active user holds, or one this tenant invited already, is 409; so is a ' +
          '101st pending invitation. More than 100 links within an hour, or 3 for one address, is 429. ' +
          'Only a PLATFORM_ADMIN may invite a PLATFORM_ADMIN (403 role_forbidden).',
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
      config: { ...people, openapi: { problems: ['conflict', 'rate_limited'] } },
      schema: {
        tags,
        summary: 'A new invitation link for a person who has not accepted yet',
        description:
          'The link made before stops working. A person who has accepted already, or whose address an ' +
          'active user holds by now, is 409; so is a link that would be the 101st pending invitation. ' +
          'More than 100 links within an hour, or 3 for one address, is 429. Returned once.',
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

  // The platform operator's view of a tenant's people (docs/api/platform.md). Crosses tenants on
  // purpose: a platform key manages the tenant the URL names, once found (404 otherwise).
  app.get(
    '/api/v1/platform/tenants/:id/users',
    {
      config: platform,
      schema: {
        tags: platformTags,
        summary: "A tenant's people, active and invited, newest first",
        description: 'The records `GET /api/v1/company/users` answers the tenant.',
        params: IdParams,
        querystring: StrictObject(PageQueryFields),
        response: { 200: CompanyUserList },
      },
    },
    async (request) =>
      listPeople(ctx, await platformScopeFor(ctx, request.principal, request.params.id), request.query),
  );

  app.delete(
    '/api/v1/platform/tenants/:id/users/:userId',
    {
      config: platform,
      schema: {
        tags: platformTags,
        summary: "Remove a tenant's person, active or invited: their sessions end at once",
        description:
          "An invited person's link stops working. The tenant's rules on who may remove whom do not " +
          "bind the operator: the tenant's last manager may be removed too. Audited in the tenant's log.",
        params: TenantUserParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const scope = await platformScopeFor(ctx, request.principal, request.params.id);
      await removePersonByOperator(ctx, scope, auditOrigin(request, ctx.now()), request.params.userId);
      return reply.code(204).send(null);
    },
  );
};

import { Type, type Static } from 'typebox';
import { ROLES, USER_STATUSES } from '../db/schema.js';
import { Nullable, PageOf, StrictObject, Timestamp } from '../http/schemas.js';

// The requests and answers of the tenant's people (docs/api/people.md): the company users routes and
// the invitation routes. The web UI imports these types; the routes validate and document with them.

/** A person of the tenant, as the people list and every change to one answer. */
export const CompanyUser = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Type.Enum(ROLES),
  status: Type.Enum(USER_STATUSES, { description: '`invited` until the invitation is accepted' }),
  createdAt: Timestamp,
  lastSignInAt: Nullable(Timestamp),
  passkeys: Type.Integer({ minimum: 0, description: 'how many passkeys the person has' }),
  passwordSignIn: Type.Boolean({ description: 'whether the person may sign in with a password' }),
});
export type CompanyUser = Static<typeof CompanyUser>;

/** `GET /api/v1/company/users`: the list shape, newest first. */
export const CompanyUserList = PageOf(CompanyUser);
export type CompanyUserList = Static<typeof CompanyUserList>;

/** `POST /api/v1/company/users`. Only a PLATFORM_ADMIN may invite a PLATFORM_ADMIN. */
export const InviteUserBody = StrictObject({
  email: Type.String({ format: 'email', maxLength: 254 }),
  role: Type.Enum(ROLES),
});
export type InviteUserBody = Static<typeof InviteUserBody>;

export const Invitation = Type.Object(
  {
    url: Type.String({ description: '`PUBLIC_URL/invite#token=…`: shown once, works once' }),
    expiresAt: Timestamp,
  },
  { description: 'The invitation link, shown in this answer only (7 days, single use)' },
);
export type Invitation = Static<typeof Invitation>;

/** 201 of `POST /api/v1/company/users` and `POST /api/v1/company/users/:id/invitation`. */
export const InvitedUser = Type.Object({ ...CompanyUser.properties, invitation: Invitation });
export type InvitedUser = Static<typeof InvitedUser>;

/** `PATCH /api/v1/company/users/:id`. */
export const ChangeRoleBody = StrictObject({ role: Type.Enum(ROLES) });
export type ChangeRoleBody = Static<typeof ChangeRoleBody>;

const Token = Type.String({
  maxLength: 64,
  description: 'the token of the invitation link, after `#token=` (32 base62 characters)',
});

/** `POST /api/v1/invitations/lookup`. */
export const InvitationLookupBody = StrictObject({ token: Token });
export type InvitationLookupBody = Static<typeof InvitationLookupBody>;

/** What an invitation is for, shown on the invitation page before the person chooses a password. */
export const InvitationLookup = Type.Object({
  email: Type.String(),
  tenant: Type.Object({ name: Type.String() }),
  expiresAt: Timestamp,
});
export type InvitationLookup = Static<typeof InvitationLookup>;

/** `POST /api/v1/invitations/accept`; answers the sign-in answer (`SignInAnswer`, src/sign-in/answer.ts). */
export const InvitationAcceptBody = StrictObject({
  token: Token,
  password: Type.String({ minLength: 12, maxLength: 200 }),
});
export type InvitationAcceptBody = Static<typeof InvitationAcceptBody>;

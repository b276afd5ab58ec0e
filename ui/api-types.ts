// The API's shapes, taken type-only from the server's own TypeBox schemas: one definition, nothing
// copied by hand. None of these imports reaches the bundle.
import type { Static } from 'typebox';
import type { AuditEntry } from '../src/access/audit-routes.js';
import type { ConnectionSchema } from '../src/connections/routes.js';
import type { DeliveryDetailSchema, DeliverySchema, STATUSES } from '../src/delivery/routes.js';
import type { ConnectorSchema, OverviewSchema, ReadinessSchema } from '../src/hub/routes.js';
import type { AllowedScopes, KeyRecord } from '../src/keys/routes.js';
import type { PasskeyRecord, PasswordSignIn } from '../src/passkeys/schemas.js';
import type { SetupAnswer as SetupAnswerSchema } from '../src/setup/routes.js';
import type { SignInAnswer as SignInAnswerSchema } from '../src/sign-in/answer.js';
import type { AuthMethods as AuthMethodsSchema } from '../src/sso/routes.js';

export type Connection = Static<typeof ConnectionSchema>;
export type Connector = Static<typeof ConnectorSchema>;
export type Overview = Static<typeof OverviewSchema>;
export type Readiness = Static<typeof ReadinessSchema>;
export type DeliveryStatus = (typeof STATUSES)[number];
export type ConnectionStatus = Connection['status'];
export type PausedReason = NonNullable<Connection['pausedReason']>;

/** One entry of a connection's event log (§7, §15): `test`, `waitingFor`, each attempt's request and response. */
export type Delivery = Static<typeof DeliverySchema>;
export type DeliveryAttempt = Delivery['attempts'][number];
/** What an attempt sent (§15): a credential header's value reads "[redacted]". */
export type AttemptRequest = NonNullable<DeliveryAttempt['request']>;
/** What the receiver answered: at most 20 headers and the start of the body; null without an answer. */
export type AttemptResponse = NonNullable<DeliveryAttempt['response']>;
/** `GET …/connections/:id/events/:deliveryId`: the entry and the body as delivered. */
export type DeliveryDetail = Static<typeof DeliveryDetailSchema>;

// The answers of resume, recover and test (§15) are declared inline in their routes
// (src/connections/routes.ts, src/delivery/operate-routes.ts), not exported: written here after the
// contract until they are, then re-pointed.

/** `POST …/connections/:id/resume`. */
export interface ResumeAnswer {
  connection: Connection;
  replayed: number;
}

/** `POST …/connections/:id/recover`. */
export interface RecoverAnswer {
  queued: number;
}

/** `POST …/connections/:id/test`. */
export interface TestEventAnswer {
  eventId: string;
  deliveryId: string;
}
export type ApiKey = Static<typeof KeyRecord>;
export type ApiKeyWithSecret = ApiKey & { secret: string };
export type AllowedScopesAnswer = Static<typeof AllowedScopes>;
export type AuditEntryRecord = Static<typeof AuditEntry>;

/** Every list of contract §2. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/** The sign-in answer of contract §4; the session answer is the same, less `expiresAt`. */
export type SignInAnswer = Static<typeof SignInAnswerSchema>;
export type SessionAnswer = Omit<SignInAnswer, 'expiresAt'> & { expiresAt?: string };
export type SetupAnswer = Static<typeof SetupAnswerSchema>;

/** A passkey of the signed-in user (contract §10), and the password sign-in switch. */
export type Passkey = Static<typeof PasskeyRecord>;
export type PasswordSignInState = Static<typeof PasswordSignIn>;

/** The ways to sign in that this hubgate offers (contract §11): `sso` when single sign-on is on. */
export type AuthMethods = Static<typeof AuthMethodsSchema>;

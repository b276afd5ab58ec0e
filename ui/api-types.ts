// The API's shapes, taken type-only from the server's own TypeBox schemas: one definition, nothing
// copied by hand. None of these imports reaches the bundle.
import type { Static } from 'typebox';
import type { AuditEntry } from '../src/access/audit-routes.js';
import type { ConnectionSchema } from '../src/connections/routes.js';
import type { DeliverySchema, STATUSES } from '../src/delivery/routes.js';
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
export type Delivery = Static<typeof DeliverySchema>;
export type DeliveryStatus = (typeof STATUSES)[number];
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

import { decodeClientDataJSON } from '@simplewebauthn/server/helpers';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { CHALLENGE_TTL_MS } from './relying-party.js';
import { insertChallenge, takeChallenge, type ChallengeRow } from './store.js';

type Ceremony = ChallengeRow['ceremony'];

/** Keeps a challenge just handed to a browser: five minutes, for this ceremony (and session) only. */
export async function rememberChallenge(
  db: Kysely<DB>,
  challenge: string,
  ceremony: Ceremony,
  sessionId: string | null,
  now: Date,
): Promise<void> {
  await insertChallenge(db, {
    challenge,
    ceremony,
    session_id: sessionId,
    created_at: now,
    expires_at: new Date(now.getTime() + CHALLENGE_TTL_MS),
  });
}

/**
 * The challenge a browser's answer signed, used up: taken before anything is verified, so an answer
 * that fails verification has still spent its challenge and a replay finds nothing. Undefined when
 * the answer names no challenge we issued for this ceremony and session, or one already used or expired.
 */
export async function useChallenge(
  db: Kysely<DB>,
  clientDataJSON: string,
  ceremony: Ceremony,
  sessionId: string | null,
  now: Date,
): Promise<string | undefined> {
  let challenge: unknown;
  try {
    challenge = decodeClientDataJSON(clientDataJSON).challenge;
  } catch {
    return undefined;
  }
  if (typeof challenge !== 'string' || challenge.length === 0 || challenge.length > 128) return undefined;
  const row = await takeChallenge(db, challenge, ceremony, sessionId, now);
  return row?.challenge;
}

// The browser's side of passkeys (docs/api/passkeys.md): the WebAuthn ceremonies through SimpleWebAuthn,
// their failures in words, and the WebAuthn Signal API where the browser has it. The pages only
// say what happened; nothing here renders.

import {
  browserSupportsWebAuthn,
  browserSupportsWebAuthnAutofill,
  sendSignal,
  startAuthentication,
  startRegistration,
  WebAuthnAbortService,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/browser';
import { api, ApiError } from '../common/api.js';
import { routes, type Page, type Passkey, type SignInAnswer } from '../common/routes.js';

/** Whether this browser can make and use passkeys at all (`window.PublicKeyCredential`). */
export const passkeysSupported = (): boolean => browserSupportsWebAuthn();

/**
 * The person closed the browser's prompt, it timed out, or the page gave it up for another
 * ceremony: nothing went wrong that a message should say. Browsers answer `NotAllowedError` for
 * all of these on purpose (a page must not learn whether a passkey exists).
 */
export function isCancelled(error: unknown): boolean {
  return error instanceof Error && (error.name === 'NotAllowedError' || error.name === 'AbortError');
}

/** A failure in new words; the server's request ID, if it answered, stays for support. */
const say = (code: string, message: string, from?: ApiError) =>
  new ApiError(from?.status ?? 0, code, message, [], from?.requestId ?? null);

const WRONG_ADDRESS = () =>
  say(
    'passkey_wrong_address',
    `The browser refused to use passkeys for ${window.location.host}. Open hubgate at the address it was set up with (its PUBLIC_URL).`,
  );

/** Why adding a passkey failed, in words (a cancelled ceremony is not asked about here). */
export function registrationFailure(error: unknown): ApiError {
  if (error instanceof ApiError) {
    switch (error.code) {
      case 'conflict':
        return say(
          'conflict',
          'That passkey is registered already. Add a passkey from another device or password manager instead.',
          error,
        );
      case 'validation_failed':
        // The name is the form's to say (`forField('name')`); anything else is the authenticator's.
        if (error.forField('name')) return error;
        return say(
          'validation_failed',
          'hubgate refused your authenticator’s answer, so no passkey was added. Try again; if it keeps happening, use another device or password manager.',
          error,
        );
      default:
        return error;
    }
  }
  const name = error instanceof Error ? error.name : '';
  switch (name) {
    case 'InvalidStateError':
      return say(
        'passkey_exists',
        'This device or password manager already holds one of your hubgate passkeys. To add another, use a different one.',
      );
    case 'NotSupportedError':
      return say(
        'passkey_unsupported',
        'Your authenticator offers none of the key types hubgate accepts (ES256, RS256). Use another device or password manager.',
      );
    case 'ConstraintError':
      return say(
        'passkey_unsupported',
        'Your authenticator cannot keep a passkey that signs in without an e-mail address. Use another device, or a password manager that stores passkeys.',
      );
    case 'SecurityError':
      return WRONG_ADDRESS();
    default:
      return say('passkey_failed', `The browser could not create a passkey: ${String(error)}`);
  }
}

/**
 * Why a passkey sign-in failed, in words; `other` words what is not about passkeys (rate limits,
 * the Origin check) as the password sign-in does.
 */
export function signInFailure(error: unknown, other: (error: ApiError) => ApiError): ApiError {
  if (error instanceof ApiError) {
    return error.code === 'invalid_credentials'
      ? say(
          'invalid_credentials',
          'hubgate did not accept that passkey: it may have been removed from your account. Choose another passkey, or sign in another way.',
          error,
        )
      : other(error);
  }
  if (error instanceof Error && error.name === 'SecurityError') return WRONG_ADDRESS();
  return say('passkey_failed', `The browser could not use a passkey: ${String(error)}`);
}

/** Every passkey of the signed-in user, newest first (a person has a handful: all pages at once). */
export async function listPasskeys(signal: AbortSignal): Promise<Passkey[]> {
  const all: Passkey[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<Passkey> = await api(routes.passkeys.list, { query: { limit: 100, cursor }, signal });
    all.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

/** Adds a passkey to the signed-in user's account: the server's options, the browser, the server. */
export async function registerPasskey(name: string): Promise<Passkey> {
  // The server passes SimpleWebAuthn's options on as they are (its schema holds only what it checks).
  const optionsJSON = (await api(
    routes.passkeys.registrationOptions,
  )) as PublicKeyCredentialCreationOptionsJSON;
  const response = await startRegistration({ optionsJSON });
  return api(routes.passkeys.registrationVerify, {
    body: name ? { response, name } : { response },
  });
}

// Signals are "fire and forget" (WebAuthn §5.1.10): the browser passes them on when it can and
// the page learns nothing either way, so a refusal is only worth a line in the console.
const quietly = (signal: Promise<unknown>) =>
  signal.catch((error: unknown) => console.warn('WebAuthn signal not sent:', error));

/**
 * The Signal API is new (Chrome 132): feature-detected, as SimpleWebAuthn's `sendSignal` throws without it.
 */
const canSignalUnknown = (): boolean =>
  typeof window.PublicKeyCredential === 'function' &&
  typeof (window.PublicKeyCredential as unknown as { signalUnknownCredential?: unknown })
    .signalUnknownCredential === 'function';

const canSignalAccepted = (): boolean =>
  typeof window.PublicKeyCredential === 'function' &&
  typeof (window.PublicKeyCredential as unknown as { signalAllAcceptedCredentials?: unknown })
    .signalAllAcceptedCredentials === 'function';

/**
 * After a removal, tells the authenticators which of the user's passkeys still work here, so the
 * removed one stops being offered. Sent from the list as the server has it now (the removal is
 * done), never from what the page remembers: a list missing a passkey that works would hide it.
 */
export async function signalAcceptedPasskeys(removed: Passkey): Promise<void> {
  if (!canSignalAccepted()) return;
  let left: Passkey[];
  try {
    left = await listPasskeys(new AbortController().signal);
  } catch (error) {
    console.warn('WebAuthn signal not sent:', error);
    return;
  }
  await quietly(
    sendSignal({
      signalName: 'allAcceptedCredentials',
      rpID: window.location.hostname,
      userID: removed.userHandle,
      allAcceptedCredentialIDs: left.map((passkey) => passkey.credentialId),
    }),
  );
}

/**
 * How long a sign-in challenge is surely still valid: the server keeps one five minutes, and the
 * options ask the browser to give up after four. A refusal within this time is not an expired
 * challenge (see `verifySignIn`).
 */
const FRESH_MS = 4 * 60 * 1000;

interface Ceremony {
  optionsJSON: PublicKeyCredentialRequestOptionsJSON;
  /** `performance.now()` when the server made the challenge. */
  issuedAt: number;
}

async function requestOptions(signal?: AbortSignal): Promise<Ceremony> {
  const optionsJSON = (await api(routes.passkeys.loginOptions, {
    signal,
  })) as PublicKeyCredentialRequestOptionsJSON;
  return { optionsJSON, issuedAt: performance.now() };
}

/**
 * Sends the browser's assertion to the server. A refusal (`401 invalid_credentials`) of a fresh
 * challenge means the credential itself cannot sign in here: no such passkey (removed, or made
 * for a database that is gone), a signature that does not match the key hubgate has for it, or a
 * counter that went back (a cloned authenticator). The server answers those alike, so each is
 * signalled as unknown, and the browser's password manager may hide that passkey. A challenge
 * that may have expired is never signalled: there the passkey is fine.
 */
async function verifySignIn(
  ceremony: Ceremony,
  response: Awaited<ReturnType<typeof startAuthentication>>,
): Promise<SignInAnswer> {
  try {
    return await api(routes.passkeys.loginVerify, {
      body: { response },
    });
  } catch (error) {
    const fresh = performance.now() - ceremony.issuedAt < FRESH_MS;
    if (error instanceof ApiError && error.code === 'invalid_credentials' && fresh && canSignalUnknown()) {
      void quietly(
        sendSignal({
          signalName: 'unknownCredential',
          rpID: ceremony.optionsJSON.rpId ?? window.location.hostname,
          credentialID: response.id,
        }),
      );
    }
    throw error;
  }
}

export type SignInPhase = 'idle' | 'asking' | 'verifying';

interface PasskeySignInEvents {
  onSignedIn(answer: SignInAnswer): void;
  /** A failure to say; undefined clears the last one. Cancelled ceremonies are not reported. */
  onError(error: unknown): void;
  onPhase(phase: SignInPhase): void;
}

/** Autofill holds a challenge; it asks for a new one before the server's expires. */
const AUTOFILL_REFRESH_MS = FRESH_MS;
/**
 * Autofill starts again after a refused passkey so the person can choose another, but not for
 * ever: a browser that answers conditional requests by itself would otherwise loop.
 */
const AUTOFILL_RETRIES = 2;

/** The state of one sign-in page's passkey sign-in, shared by autofill and the button. */
interface SignInFlow {
  events: PasskeySignInEvents;
  stopped: boolean;
  /** Which autofill is current; an older one's outcome is ignored. */
  generation: number;
  retries: number;
  refresh: ReturnType<typeof setTimeout> | undefined;
  controller: AbortController | undefined;
}

function abortAutofill(flow: SignInFlow): void {
  flow.generation += 1;
  clearTimeout(flow.refresh);
  flow.controller?.abort();
  WebAuthnAbortService.cancelCeremony();
}

/** Leaving the page: nothing may stay pending in the browser. */
function stopSignIn(flow: SignInFlow): void {
  flow.stopped = true;
  abortAutofill(flow);
}

/** The server checks the passkey's answer: signed in (true), or the failure said (false). */
async function finishSignIn(
  flow: SignInFlow,
  ceremony: Ceremony,
  response: Awaited<ReturnType<typeof startAuthentication>>,
): Promise<boolean> {
  flow.events.onPhase('verifying');
  try {
    const answer = await verifySignIn(ceremony, response);
    stopSignIn(flow);
    flow.events.onSignedIn(answer);
    return true;
  } catch (error) {
    flow.events.onError(error);
    flow.events.onPhase('idle');
    return false;
  }
}

/** The options of autofill round `mine`, or null when it cannot start or was replaced meanwhile. */
async function autofillOptions(
  flow: SignInFlow,
  mine: number,
  signal: AbortSignal,
): Promise<Ceremony | null> {
  if (!(await browserSupportsWebAuthnAutofill()) || mine !== flow.generation) return null;
  try {
    const ceremony = await requestOptions(signal);
    return mine === flow.generation ? ceremony : null;
  } catch (error) {
    // Autofill is a convenience: the button still works and says what is wrong when pressed.
    if (mine === flow.generation) console.warn('Passkey autofill is off:', error);
    return null;
  }
}

async function autofill(flow: SignInFlow, mine: number, signal: AbortSignal): Promise<void> {
  const ceremony = await autofillOptions(flow, mine, signal);
  if (!ceremony) return;
  flow.refresh = setTimeout(() => startAutofill(flow), AUTOFILL_REFRESH_MS);
  let response;
  try {
    response = await startAuthentication({ optionsJSON: ceremony.optionsJSON, useBrowserAutofill: true });
  } catch (error) {
    // Replaced (the button, a refresh) or given up; a browser that refuses conditional requests
    // leaves the field as it was.
    if (mine === flow.generation && !isCancelled(error)) console.warn('Passkey autofill ended:', error);
    return;
  }
  clearTimeout(flow.refresh);
  // The person chose a passkey in the e-mail field's suggestions.
  if (!(await finishSignIn(flow, ceremony, response)) && mine === flow.generation && flow.retries-- > 0) {
    startAutofill(flow);
  }
}

function startAutofill(flow: SignInFlow): void {
  if (flow.stopped) return;
  abortAutofill(flow);
  flow.controller = new AbortController();
  void autofill(flow, flow.generation, flow.controller.signal);
}

/** The "Sign in with a passkey" button. */
async function withButton(flow: SignInFlow): Promise<void> {
  if (flow.stopped) return;
  abortAutofill(flow);
  flow.events.onError(undefined);
  flow.events.onPhase('asking');
  let signedIn = false;
  try {
    const ceremony = await requestOptions();
    const response = await startAuthentication({ optionsJSON: ceremony.optionsJSON });
    signedIn = await finishSignIn(flow, ceremony, response);
  } catch (error) {
    if (!isCancelled(error)) flow.events.onError(error);
    flow.events.onPhase('idle');
  } finally {
    if (!signedIn) {
      flow.retries = AUTOFILL_RETRIES;
      startAutofill(flow);
    }
  }
}

/**
 * Passkey sign-in on the sign-in page: autofill (conditional mediation) on the e-mail field while
 * the page is open, and the button's modal ceremony. A browser runs one `credentials.get()` at a
 * time, so the button first aborts autofill, and autofill starts again once the button's ceremony
 * ended without signing in. SimpleWebAuthn's `WebAuthnAbortService` holds the one pending
 * ceremony: every `start…()` aborts the one before it.
 */
export function passkeySignIn(events: PasskeySignInEvents) {
  const flow: SignInFlow = {
    events,
    stopped: false,
    generation: 0,
    retries: AUTOFILL_RETRIES,
    refresh: undefined,
    controller: undefined,
  };
  return {
    startAutofill: () => startAutofill(flow),
    withButton: () => withButton(flow),
    stop: () => stopSignIn(flow),
  };
}

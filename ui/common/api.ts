// The one way the UI talks to the API: a route of the table in routes.ts (so its path, body, query
// and answer cannot disagree), same-origin cookies and the session's CSRF token on unsafe methods (or,
// on the portal page, the portal session's bearer token and no cookie),
// problem details turned into sentences, and a session that ended handed to whoever listens
// (session.ts, through `watchSession`), so that this module imports nothing of the UI.
import type { RouteSpec } from './routes.js';

export interface FieldError {
  path: string;
  message: string;
}

/** An answer that was not a success, in words a person can act on. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fieldErrors: FieldError[] = [],
    readonly requestId: string | null = null,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }

  /** The message for one field of a form (`url`, `eventTypes.0` …), if the API named it. */
  forField(name: string): string | undefined {
    return this.fieldErrors.find((e) => e.path === name || e.path.startsWith(`${name}.`))?.message;
  }

  /** The same refusal said in other words (a page knows better what a 409 means there). */
  saying(message: string): ApiError {
    return new ApiError(
      this.status,
      this.code,
      message,
      this.fieldErrors,
      this.requestId,
      this.retryAfterSeconds,
    );
  }
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
let csrfToken: string | null = null;

/** The session's CSRF token, from the sign-in or session answer; never stored anywhere else. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

let portalToken: string | null = null;

/**
 * The portal page's `ptl_` token (docs/api/portal.md), held in memory: while set, every call of a route
 * that needs a credential sends it as `Authorization: Bearer` and sends no cookie, so the page works
 * framed on another site with third-party cookies blocked, and needs no CSRF token.
 */
export function setPortalToken(token: string | null): void {
  portalToken = token;
}

/**
 * What the client tells the session about: `ended` (a 401 on a call that needed the session) and
 * `stale` (a 403 `role_forbidden` or `csrf_failed`: another tab may have signed in as someone else).
 */
export type SessionEvent = 'ended' | 'stale';
let tellSession: (event: SessionEvent) => void = () => undefined;
export function onSessionEvent(listener: (event: SessionEvent) => void): void {
  tellSession = listener;
}

export const inMinutes = (seconds: number): string => {
  const minutes = Math.ceil(seconds / 60);
  return seconds < 60 ? `${seconds} seconds` : minutes === 1 ? '1 minute' : `${minutes} minutes`;
};

/** Words for the error codes (docs/api/errors.md), where the server's own detail would not help a person. */
const WORDS: Record<string, (retryAfter: number | null, detail: string | null) => string> = {
  rate_limited: (retryAfter) =>
    retryAfter === null
      ? 'Too many requests. Wait a moment and try again.'
      : `Too many requests. Try again in ${inMinutes(retryAfter)}.`,
  csrf_failed: () => 'This page’s security token is out of date. Reload the page and try again.',
  role_forbidden: () => 'Your role does not allow this. Ask an administrator of your organization.',
  entitlement_missing: () =>
    'Your organization is not entitled to this module. Ask your platform operator to enable it.',
  // Two causes answer 503: the database is down, or too many passwords are being checked at once.
  unavailable: (_, detail) =>
    detail && !/database/i.test(detail)
      ? 'hubgate is busy right now. Try again in a moment.'
      : 'hubgate cannot reach its database right now. Try again in a moment.',
  internal: () => 'Something went wrong on the server. Try again; if it keeps happening, tell your operator.',
  payload_too_large: () => 'That is more data than hubgate accepts in one request.',
};

function messageOf(status: number, code: string, detail: string | null, retryAfter: number | null): string {
  const words = WORDS[code];
  if (words) return words(retryAfter, detail);
  if (detail) return detail;
  if (status === 0) return 'hubgate could not be reached. Check your connection and try again.';
  return `The request failed (HTTP ${status}).`;
}

interface Problem {
  code?: string;
  detail?: string | null;
  errors?: FieldError[];
  requestId?: string;
}

// ---- The route table's types: what a call of a route takes and answers ----

/** The `:name` parameters of a path template. */
type ParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<Rest>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/**
 * What a call of `R` takes: the path's parameters, its body and query when it has them, and a few options.
 */
export type Input<R extends RouteSpec> = ([ParamNames<R['path']>] extends [never]
  ? unknown
  : { params: Record<ParamNames<R['path']>, string> }) &
  (R extends { body: infer B } ? (undefined extends B ? { body?: B } : { body: B }) : unknown) &
  (R extends { query: infer Q } ? { query?: Q } : unknown) &
  (R extends { auth: 'platform' } ? { bearer: string } : unknown) & {
    signal?: AbortSignal;
    /** More request headers (`If-Match` …). */
    headers?: Record<string, string>;
  };

/** The input as a rest parameter: optional when nothing in it is required. */
export type Args<I> = object extends I ? [input?: I] : [input: I];
export type Answer<R extends RouteSpec> = R['answer'];

type QueryValue = string | number | boolean | null | undefined;

/** A path with its query string, leaving out empty values. */
export function withQuery(path: string, query: Record<string, QueryValue>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** The URL of a route, its parameters filled in (encoded) and its query added. */
export function routeUrl<R extends RouteSpec>(route: R, input?: { params?: object; query?: object }): string {
  const params = (input?.params ?? {}) as Record<string, string>;
  const path = route.path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${route.path}: no value for :${name}`);
    return encodeURIComponent(value);
  });
  return withQuery(path, (input?.query ?? {}) as Record<string, QueryValue>);
}

/** "POST /api/v1/integrations/events": a route as the API's documentation names it. */
export const routeText = (route: RouteSpec): string => `${route.method} ${route.path}`;

interface CallInput {
  params?: object;
  query?: object;
  body?: unknown;
  bearer?: string;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

async function send(route: RouteSpec, input: CallInput): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json', ...input.headers };
  if (input.body !== undefined) headers['content-type'] = 'application/json';
  const auth = route.auth ?? 'session';
  // A request with a key carries no session: the console and the portal never mix the two.
  const bearer = auth === 'platform' ? (input.bearer ?? '') : auth === 'session' ? portalToken : null;
  if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
  else if (UNSAFE.has(route.method) && csrfToken) headers['x-csrf-token'] = csrfToken;
  try {
    return await fetch(routeUrl(route, input), {
      method: route.method,
      headers,
      credentials: bearer === null ? 'same-origin' : 'omit',
      body: input.body === undefined ? undefined : JSON.stringify(input.body),
      signal: input.signal,
    });
  } catch (error) {
    if (input.signal?.aborted) throw error;
    throw new ApiError(0, 'network', messageOf(0, 'network', null, null));
  }
}

function problemOf(response: Response, body: unknown): ApiError {
  const problem = (body ?? {}) as Problem;
  const code = problem.code ?? 'unknown';
  const retryAfterHeader = response.headers.get('retry-after');
  const retryAfter = retryAfterHeader && /^\d+$/.test(retryAfterHeader) ? Number(retryAfterHeader) : null;
  return new ApiError(
    response.status,
    code,
    messageOf(response.status, code, problem.detail ?? null, retryAfter),
    problem.errors ?? [],
    problem.requestId ?? null,
    retryAfter,
  );
}

/**
 * Calls a route of the table (`routes.keys.rotate`, …) with what it takes, and answers what it
 * answers. A refusal throws an `ApiError` in words. A 401 on a route that needs the session tells
 * the session it ended (sign-in follows); on `auth: 'optional'` routes (sign-in, setup) it is an
 * answer, and platform routes leave their key to the console.
 */
export async function api<R extends RouteSpec>(route: R, ...[input]: Args<Input<R>>): Promise<Answer<R>> {
  const call = (input ?? {}) as CallInput;
  const response = await send(route, call);
  if (response.status === 204) return undefined as Answer<R>;
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (response.ok) return body as Answer<R>;
  const error = problemOf(response, body);
  throw refused(route, response, error);
}

/** A refusal, after telling the session what it means for it (platform routes leave it to the console). */
function refused(route: RouteSpec, response: Response, error: ApiError): ApiError {
  const auth = route.auth ?? 'session';
  if (auth === 'platform') return error;
  if (response.status === 401 && auth === 'session') tellSession('ended');
  if (error.code === 'role_forbidden' || error.code === 'csrf_failed') tellSession('stale');
  return error;
}

/**
 * A GET route's answer in another representation (`text/csv`), as text, with the same credentials and
 * the same refusals in words as `api()`: a download that the page saves (a plain link could not carry
 * the console's key or the portal's token).
 */
export async function apiText<R extends RouteSpec & { method: 'GET' }>(
  route: R,
  accept: string,
  ...[input]: Args<Input<R>>
): Promise<string> {
  const call = (input ?? {}) as CallInput;
  const response = await send(route, { ...call, headers: { ...call.headers, accept } });
  const text = await response.text();
  if (response.ok) return text;
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  throw refused(route, response, problemOf(response, body));
}

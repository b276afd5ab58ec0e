// The one way the UI talks to the API: same-origin cookies, the session's CSRF token on unsafe
// methods, problem details turned into sentences, and a session that ended sent to sign-in.
import { loadSession, sessionEnded } from './session.js';

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
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
let csrfToken: string | null = null;

/** The session's CSRF token, from the sign-in or session answer; never stored anywhere else. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export const inMinutes = (seconds: number): string => {
  const minutes = Math.ceil(seconds / 60);
  return seconds < 60 ? `${seconds} seconds` : minutes === 1 ? '1 minute' : `${minutes} minutes`;
};

/** Words for the codes of contract §3, where the server's own detail would not help a person. */
function messageOf(status: number, code: string, detail: string | null, retryAfter: number | null): string {
  switch (code) {
    case 'rate_limited':
      return retryAfter === null
        ? 'Too many requests. Wait a moment and try again.'
        : `Too many requests. Try again in ${inMinutes(retryAfter)}.`;
    case 'csrf_failed':
      return 'This page’s security token is out of date. Reload the page and try again.';
    case 'role_forbidden':
      return 'Your role does not allow this. Ask an administrator of your organization.';
    case 'entitlement_missing':
      return 'Your organization is not entitled to this module. Ask your platform operator to enable it.';
    case 'unavailable':
      return 'hubgate cannot reach its database right now. Try again in a moment.';
    case 'internal':
      return 'Something went wrong on the server. Try again; if it keeps happening, tell your operator.';
    case 'payload_too_large':
      return 'That is more data than hubgate accepts in one request.';
    default:
      if (detail) return detail;
      if (status === 0) return 'hubgate could not be reached. Check your connection and try again.';
      return `The request failed (HTTP ${status}).`;
  }
}

interface Problem {
  code?: string;
  detail?: string | null;
  errors?: FieldError[];
  requestId?: string;
}

export interface RequestOptions {
  body?: unknown;
  /** For sign-in and setup: a 401 is a wrong answer, not a session that ended. */
  anonymous?: boolean;
  signal?: AbortSignal;
  /** A platform key for `/api/v1/platform/*` (the operator console): sent as Bearer, no cookies. */
  bearer?: string;
  /** More request headers (`If-Match` …). */
  headers?: Record<string, string>;
}

export async function api<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { ...options.headers, accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`;
  else if (UNSAFE.has(method) && csrfToken) headers['x-csrf-token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      // A request with a key carries no session: the console never mixes the two.
      credentials: options.bearer !== undefined ? 'omit' : 'same-origin',
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw new ApiError(0, 'network', messageOf(0, 'network', null, null));
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (response.ok) return body as T;

  const problem = (body ?? {}) as Problem;
  const code = problem.code ?? 'unknown';
  const retryAfterHeader = response.headers.get('retry-after');
  const retryAfter = retryAfterHeader && /^\d+$/.test(retryAfterHeader) ? Number(retryAfterHeader) : null;
  const error = new ApiError(
    response.status,
    code,
    messageOf(response.status, code, problem.detail ?? null, retryAfter),
    problem.errors ?? [],
    problem.requestId ?? null,
    retryAfter,
  );
  if (options.bearer !== undefined) throw error;
  if (response.status === 401 && !options.anonymous) sessionEnded('expired');
  // Another tab may have signed in as someone else: this tab learns who it is now (and the
  // session's current CSRF token) before the person tries again.
  if (code === 'role_forbidden' || code === 'csrf_failed') void loadSession();
  throw error;
}

/** A path with its query string, leaving out empty values. */
export function withQuery(path: string, query: Record<string, string | number | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/**
 * The closed set of error codes of docs/api/errors.md, each with its one HTTP status and title. Domain
 * code throws `new HttpProblem(code, detail)`; only http/error-handler.ts turns it into a body.
 */
export const PROBLEMS = {
  invalid_json: { status: 400, title: 'Invalid JSON' },
  validation_failed: { status: 400, title: 'Validation failed' },
  destination_forbidden: { status: 400, title: 'Destination forbidden' },
  unauthenticated: { status: 401, title: 'Unauthenticated' },
  invalid_credentials: { status: 401, title: 'Invalid credentials' },
  // An incoming webhook whose signature or signed timestamp does not verify (docs/api/sources.md).
  invalid_signature: { status: 401, title: 'Invalid signature' },
  csrf_failed: { status: 403, title: 'CSRF check failed' },
  route_not_allowed: { status: 403, title: 'Route not allowed for this credential' },
  interactive_session_required: { status: 403, title: 'Interactive session required' },
  platform_key_required: { status: 403, title: 'Platform key required' },
  entitlement_missing: { status: 403, title: 'Entitlement missing' },
  insufficient_scope: { status: 403, title: 'Insufficient scope' },
  role_forbidden: { status: 403, title: 'Role forbidden' },
  password_sign_in_disabled: { status: 403, title: 'Password sign-in disabled' },
  not_found: { status: 404, title: 'Not found' },
  // The MCP endpoint's GET (docs/api/mcp.md): the transport's way of saying it offers no event stream.
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  // A code of our own beside the specification's: a request that never finishes arriving ends in 408
  // (docs/api/limits.md), and every error is problem details, so the 408 needs a code too.
  request_timeout: { status: 408, title: 'Request timeout' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  rate_limited: { status: 429, title: 'Too many requests' },
  // A tenant at a quota the platform set (docs/api/quotas.md): 429 for the events of a day, which come
  // back at the next UTC day (`Retry-After`); 409 for a connection too many, which waiting never frees.
  quota_exceeded: { status: 429, title: 'Quota exceeded', also: [409] },
  internal: { status: 500, title: 'Internal server error' },
  // The credential proxy's: the provider's API gave no answer that can be passed back (docs/api/oauth.md).
  bad_gateway: { status: 502, title: 'Bad gateway' },
  unavailable: { status: 503, title: 'Service unavailable' },
} as const satisfies Record<string, { status: number; title: string; also?: readonly number[] }>;

export type ProblemCode = keyof typeof PROBLEMS;

export interface FieldError {
  path: string;
  message: string;
}

/** A limit a request was refused by: its policy's name, its quota, and its window in seconds. */
export interface RefusedLimit {
  policy: string;
  quota: number;
  windowSeconds: number;
}

export class HttpProblem extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly detail: string | undefined;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;
  /** The limit a 429 enforces, for its RateLimit-Policy field (http/rate-limit-fields.ts). */
  readonly limit: RefusedLimit | undefined;

  constructor(
    code: ProblemCode,
    detail?: string,
    options: {
      errors?: FieldError[];
      headers?: Record<string, string>;
      status?: number;
      limit?: RefusedLimit;
    } = {},
  ) {
    super(detail ?? PROBLEMS[code].title);
    this.name = 'HttpProblem';
    this.code = code;
    this.status = statusOf(code, options.status);
    this.detail = detail;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.limit = options.limit;
  }
}

/** Every status a code answers with: its own, and the few others PROBLEMS allows it (`also`). */
export function statusesOf(code: ProblemCode): readonly number[] {
  const entry: { status: number; also?: readonly number[] } = PROBLEMS[code];
  return [entry.status, ...(entry.also ?? [])];
}

/** The status of one problem: the code's own unless another it allows is asked for. */
function statusOf(code: ProblemCode, wanted: number | undefined): number {
  if (wanted === undefined) return PROBLEMS[code].status;
  if (!statusesOf(code).includes(wanted)) throw new Error(`${code} does not answer with ${wanted}`);
  return wanted;
}

/** A 400 `validation_failed` naming one field, for checks a schema cannot express. */
export function fieldProblem(path: string, message: string): HttpProblem {
  return new HttpProblem('validation_failed', `${path}: ${message}`, { errors: [{ path, message }] });
}

export const notFound = (what = 'resource'): HttpProblem => new HttpProblem('not_found', `No such ${what}.`);

/** The 404 of a request no route takes, however the router came to refuse it. */
export const noSuchRoute = (): HttpProblem => new HttpProblem('not_found', 'No such route.');

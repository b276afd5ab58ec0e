/**
 * The rate-limit header fields of docs/api/rate-limits.md: the IETF `RateLimit-Policy` and `RateLimit`
 * (draft-ietf-httpapi-ratelimit-headers, its latest syntax: a Structured Fields list of quoted policy
 * names with `q` quota and `w` window seconds, and `r` remaining with `t` seconds to reset), beside
 * the older `RateLimit-Limit`, `-Remaining` and `-Reset` the docs promised first.
 */

/** One limit that applied to a request, and where the request stands within it. */
export interface PolicyCount {
  /** The policy's name: `credential`, `tenant`, `address`, `sign-in`, `source` … */
  policy: string;
  /** Units (requests) the policy allows per window. */
  quota: number;
  windowSeconds: number;
  remaining: number;
  /** Seconds until the window resets, or until a refused request may succeed. */
  resetSeconds: number;
}

/**
 * The fields for the limits that applied, the first the most constrained (it sets the older
 * single-limit fields). Every name and value is plain ASCII: policy names are ours.
 */
export function rateLimitFields(counts: readonly PolicyCount[]): Record<string, string> {
  const [tightest] = [...counts].sort((a, b) => a.remaining - b.remaining);
  if (!tightest) return {};
  const whole = (n: number) => Math.max(0, Math.floor(n));
  return {
    'ratelimit-policy': counts
      .map((c) => `"${c.policy}";q=${whole(c.quota)};w=${whole(c.windowSeconds)}`)
      .join(', '),
    ratelimit: counts
      .map((c) => `"${c.policy}";r=${whole(c.remaining)};t=${whole(c.resetSeconds)}`)
      .join(', '),
    'ratelimit-limit': String(whole(tightest.quota)),
    'ratelimit-remaining': String(whole(tightest.remaining)),
    'ratelimit-reset': String(whole(tightest.resetSeconds)),
  };
}

/**
 * The fields of a refusal (429) that names its limit, or none (a lockout, a quota whose helper said
 * nothing more): its Retry-After is the time to reset, nothing remains, and a quota not stated is 0
 * for that time, the truth of the refusal (docs/api/rate-limits.md).
 */
export function refusalFields(
  retryAfterSeconds: number,
  limit?: { policy: string; quota: number; windowSeconds: number },
): Record<string, string> {
  return rateLimitFields([
    {
      policy: limit?.policy ?? 'default',
      quota: limit?.quota ?? 0,
      windowSeconds: limit?.windowSeconds ?? retryAfterSeconds,
      remaining: 0,
      resetSeconds: retryAfterSeconds,
    },
  ]);
}

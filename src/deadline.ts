/**
 * Rejects after `ms` when `promise` has not settled by then, with an error whose code is
 * `ETIMEDOUT` (the work itself goes on, unobserved; the caller closes what it must).
 */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`${what} took longer than ${ms} ms`), { code: 'ETIMEDOUT' })),
      ms,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The time one piece of work may still take, shared by every call it makes: a delivery attempt's
 * token requests and sends (and a broker destination's connect and publish) all draw on the same
 * budget, so together they end by one deadline, not each by its own (docs/decisions/0063).
 * Every outbound call takes `signal`; a client that wants a number reads `remainingMs()`.
 */
export interface Budget {
  /** Aborted once the time is spent, with a `TimeoutError` as its reason. */
  readonly signal: AbortSignal;
  /** Milliseconds left; 0 once spent. */
  remainingMs(): number;
}

/** A budget of `ms` from now (at least 0: a budget of 0 is spent at once). */
export function budgetOf(ms: number): Budget {
  const span = Math.max(0, Math.floor(ms));
  const ends = performance.now() + span;
  const signal = AbortSignal.timeout(span);
  return { signal, remainingMs: () => (signal.aborted ? 0 : Math.max(0, ends - performance.now())) };
}

/** A budget with no deadline of its own, spent when `signal` aborts (work shared by several budgets). */
export function budgetUntil(signal: AbortSignal): Budget {
  return { signal, remainingMs: () => (signal.aborted ? 0 : Number.POSITIVE_INFINITY) };
}

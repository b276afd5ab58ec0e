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

import assert from 'node:assert/strict';

export interface WaitOptions {
  /** What is awaited, as the failure says it; a function to tell the state it was last seen in. */
  message: string | (() => string);
  /** 15 s unless given: generous, as two loaded cores run the suite beside other work. */
  timeoutMs?: number;
  /** How long to wait between two looks (50 ms unless given). */
  intervalMs?: number;
}

/**
 * Looks at `condition` until it answers something truthy, and answers that; fails the test with
 * `message` once `timeoutMs` have passed. The one way a test waits for something to happen.
 */
export async function waitUntil<T>(
  condition: () => T | Promise<T>,
  options: WaitOptions,
): Promise<Exclude<T, false | 0 | '' | null | undefined>> {
  const { timeoutMs = 15_000, intervalMs = 50 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await condition();
    if (answer) return answer as Exclude<T, false | 0 | '' | null | undefined>;
    if (Date.now() > deadline) {
      const message = typeof options.message === 'function' ? options.message() : options.message;
      assert.fail(`timed out after ${timeoutMs} ms waiting for ${message}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

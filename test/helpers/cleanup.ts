/**
 * What a helper that starts something (a receiver, a process) needs to stop it when its owner ends:
 * a test's `t` (node:test's TestContext), or `{ after }` from node:test for the whole file.
 */
export interface Cleanup {
  after(fn: () => unknown): void;
}

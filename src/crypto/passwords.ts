import { availableParallelism } from 'node:os';
import { hash, verify } from '@node-rs/argon2';

// OWASP Password Storage Cheat Sheet: Argon2id, m=19 MiB, t=2, p=1.
const OPTIONS = {
  algorithm: 2 /* Argon2id; the package exports it as an ambient const enum */,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

/** Thrown when no hashing slot came free in time, unless `limitPasswordHashing` said what to throw. */
export class PasswordHashingBusy extends Error {
  constructor() {
    super('password hashing is at its limit');
    this.name = 'PasswordHashingBusy';
  }
}

export interface PasswordHashingLimit {
  /** Hashes and verifications running at once in this process. */
  concurrency: number;
  /** How long one waits for a slot before it is refused. */
  maxWaitMs: number;
  /** The error a refused one throws (the app's 503 with Retry-After). */
  busy: () => Error;
}

interface Waiter {
  grant(): void;
  settled: boolean;
}

/**
 * Argon2 costs tens of milliseconds of CPU and 19 MiB each, on libuv's thread pool. Unbounded, a
 * burst of sign-ins from many addresses (which no per-address or per-account limit stops) queues
 * there and slows everything else that uses the pool, database drivers and DNS included. So every
 * hash and verification in the process takes one of `concurrency` slots; the rest wait in order, at
 * most `maxWaitMs`, and are then refused (docs/decisions/0050-password-hashing-bounded.md).
 * Process-wide on purpose: the bound is about this process's CPUs, whatever app or route hashes.
 */
const slots = {
  limit: {
    concurrency: availableParallelism(),
    maxWaitMs: 2_000,
    busy: () => new PasswordHashingBusy(),
  } as PasswordHashingLimit,
  running: 0,
  queue: [] as Waiter[],
};
const refusals = new WeakSet<object>();

/** Sets the bound (buildApp, from PASSWORD_HASH_CONCURRENCY). Waiting work keeps its place. */
export function limitPasswordHashing(limit: Partial<PasswordHashingLimit>): void {
  slots.limit = { ...slots.limit, ...limit };
  grantFreeSlots();
}

/** Whether `error` is a refusal of the bound (no hashing happened), as opposed to a failed hash. */
export const isPasswordHashingBusy = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && refusals.has(error);

function grantFreeSlots(): void {
  while (slots.running < slots.limit.concurrency && slots.queue.length > 0) {
    const next = slots.queue.shift();
    if (next && !next.settled) next.grant();
  }
}

function acquire(): Promise<void> {
  if (slots.running < slots.limit.concurrency && slots.queue.length === 0) {
    slots.running++;
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const waiter: Waiter = {
      settled: false,
      grant() {
        waiter.settled = true;
        clearTimeout(timer);
        slots.running++;
        resolve();
      },
    };
    const timer = setTimeout(() => {
      waiter.settled = true;
      // Left in the queue, skipped when its turn comes: removing it here would cost a search.
      const refusal = slots.limit.busy();
      refusals.add(refusal);
      reject(refusal);
    }, slots.limit.maxWaitMs);
    timer.unref();
    slots.queue.push(waiter);
    // A long queue of refused waiters is dropped from its front as slots come free; this keeps a
    // burst that is all refused from growing it without end.
    while (slots.queue[0]?.settled) slots.queue.shift();
  });
}

async function withSlot<T>(work: () => Promise<T>): Promise<T> {
  await acquire();
  try {
    return await work();
  } finally {
    slots.running--;
    grantFreeSlots();
  }
}

export function hashPassword(password: string): Promise<string> {
  return withSlot(() => hash(password, OPTIONS));
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  return withSlot(async () => {
    try {
      return await verify(stored, password);
    } catch {
      // A malformed stored hash is a failed sign-in, not a server error the caller could probe for.
      return false;
    }
  });
}

// Verified against when the account does not exist, so both answers take the same time.
let decoy: Promise<string> | undefined;
export function decoyPasswordHash(): Promise<string> {
  decoy ??= hashPassword('hubgate-decoy-password-never-matches').catch((error: unknown) => {
    // Refused by the bound (or failed): the next sign-in makes it again rather than fail for ever.
    decoy = undefined;
    throw error;
  });
  return decoy;
}

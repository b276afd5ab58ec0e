import { hash, verify } from '@node-rs/argon2';

// OWASP Password Storage Cheat Sheet: Argon2id, m=19 MiB, t=2, p=1.
const OPTIONS = {
  algorithm: 2 /* Argon2id; the package exports it as an ambient const enum */,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    // A malformed stored hash is a failed sign-in, not a server error the caller could probe for.
    return false;
  }
}

// Verified against when the account does not exist, so both answers take the same time.
let decoy: Promise<string> | undefined;
export function decoyPasswordHash(): Promise<string> {
  decoy ??= hashPassword('hubgate-decoy-password-never-matches');
  return decoy;
}

// The connect link kept in this tab while the person is at the OAuth2 provider (link.ts says what and
// why). sessionStorage only: this tab, gone when it closes. Every access may throw (storage switched
// off, a sandboxed frame, a full quota): then nothing is kept, and the page says to open the link again.
import { parseStored, storageKeyOf, type StoredLink } from './link.js';

export function readStored(tenantId: string): StoredLink | null {
  try {
    return parseStored(window.sessionStorage.getItem(storageKeyOf(tenantId)));
  } catch {
    return null;
  }
}

/** Keeps the link; false when the browser refused to keep it. */
export function keepStored(tenantId: string, link: StoredLink): boolean {
  try {
    window.sessionStorage.setItem(storageKeyOf(tenantId), JSON.stringify(link));
    return true;
  } catch {
    return false;
  }
}

export function forgetStored(tenantId: string): void {
  try {
    window.sessionStorage.removeItem(storageKeyOf(tenantId));
  } catch {
    // Nothing could be kept either.
  }
}

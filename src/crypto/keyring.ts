import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';

/**
 * Everything that needs the master secret goes through a keyring: one key per purpose, derived
 * with HKDF, so a key used to hash API tokens can never decrypt a stored credential and vice versa.
 */
export type KeyPurpose =
  | 'token-hash'
  | 'session-hash'
  | 'setup-token-hash'
  | 'csrf'
  | 'connection-credentials'
  | 'event-payload'
  | 'alert-channel-secrets'
  | 'oauth'
  | 'cursor'
  | 'source-secrets';

export interface Keyring {
  /** Deterministic keyed hash (HMAC-SHA256, hex) for looking a bearer token up by its value. */
  hashToken(purpose: KeyPurpose, token: string): string;
  /** AES-256-GCM; `context` (e.g. the owning record's ID) is bound as additional data. */
  seal(purpose: KeyPurpose, plaintext: string, context?: string): string;
  open(purpose: KeyPurpose, sealed: string, context?: string): string;
}

const FORMAT_VERSION = 'v1';

export function createKeyring(masterKey: Buffer): Keyring {
  // KeyObjects, made once: a cipher keyed with a raw buffer imports the key on every call, which
  // costs three times the encryption of a small payload.
  const derived = new Map<string, KeyObject>();
  const keyFor = (purpose: KeyPurpose): KeyObject => {
    let key = derived.get(purpose);
    if (!key) {
      key = createSecretKey(Buffer.from(hkdfSync('sha256', masterKey, 'hubgate', `hubgate:${purpose}`, 32)));
      derived.set(purpose, key);
    }
    return key;
  };

  return {
    hashToken(purpose, token) {
      return createHmac('sha256', keyFor(purpose)).update(token).digest('hex');
    },
    seal(purpose, plaintext, context = '') {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', keyFor(purpose), iv);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [FORMAT_VERSION, iv, body, cipher.getAuthTag()]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },
    open(purpose, sealed, context = '') {
      const [version, iv, body, tag] = sealed.split('.');
      if (version !== FORMAT_VERSION || !iv || body === undefined || !tag) {
        throw new Error('sealed value has an unknown format');
      }
      const decipher = createDecipheriv('aes-256-gcm', keyFor(purpose), Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    },
  };
}

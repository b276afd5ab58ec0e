import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks headers (docs/api/signatures.md): `v1,` + base64 HMAC-SHA256 over `{id}.{timestamp}.{body}`
 * with the secret's bytes, one signature per valid secret (two during a rotation overlap).
 */
export function signatureHeaders(
  eventId: string,
  body: string,
  secrets: readonly string[],
  at: Date,
): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signatures = secrets.map((secret) => {
    const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
    return `v1,${createHmac('sha256', key).update(`${eventId}.${timestamp}.${body}`).digest('base64')}`;
  });
  return { 'webhook-id': eventId, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
}

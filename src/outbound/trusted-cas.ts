import { getCACertificates, setDefaultCACertificates } from 'node:tls';

let trustedCount: number | undefined;

/**
 * Makes every outbound TLS connection of this process (webhook receivers over undici, brokers,
 * OAuth providers, the mail server) trust the operating system's certificate store as well as
 * Node's bundled Mozilla list and NODE_EXTRA_CA_CERTS. An operator whose brokers or receivers carry
 * certificates of a private CA adds that CA to the system store (`update-ca-certificates`) as for
 * any other program of the host; Node alone would trust only its bundled list
 * (docs/decisions/0085-outbound-tls-trusts-the-system-store.md). Called by the composition root
 * (services.ts) before anything connects; the store is read once per process. Answers how many
 * certificates are trusted.
 */
export function trustSystemStore(): number {
  if (trustedCount !== undefined) return trustedCount;
  const trusted = [
    ...new Set([
      ...getCACertificates('bundled'),
      ...getCACertificates('system'),
      ...getCACertificates('extra'),
    ]),
  ];
  setDefaultCACertificates(trusted);
  trustedCount = trusted.length;
  return trustedCount;
}

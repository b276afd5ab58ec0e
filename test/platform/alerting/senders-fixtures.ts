import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Resolver } from '../../../src/outbound/sender.js';
import type { DestinationPolicy } from '../../../src/outbound/ssrf-policy.js';
import type { Notification, OpenChannel } from '../../../src/platform/alerting/notification.js';
import { createChannelSender, type ChannelSenderDeps } from '../../../src/platform/alerting/senders/index.js';

/** Only 127.0.0.1 is reachable: 127.0.0.2, ::1 and `localhost` stand for refused destinations. */
export const policy: DestinationPolicy = {
  allowHttp: true,
  allowedCidrs: [ipaddr.parseCIDR('127.0.0.1/32')],
};

export const PUBLIC_URL = 'https://hub.example.test/';

export function channelSender(overrides: Partial<ChannelSenderDeps> = {}) {
  return createChannelSender({
    policy,
    timeoutMs: 3_000,
    publicUrl: PUBLIC_URL,
    now: () => new Date(),
    ...overrides,
  });
}

export const STARTS_AT = new Date('2025-01-02T03:04:05.000Z');
export const ENDS_AT = new Date('2025-01-02T03:14:05.000Z');

const labels = { alertname: 'DeliveryFailed', severity: 'critical', tenantId: 'ten_abc' };
const annotations = {
  summary: 'Delivery dlv_1 failed after 8 attempts',
  description: 'HTTP 500 from the receiver',
};

export const firing: Notification = {
  status: 'firing',
  alerts: [{ fingerprint: 'fp_1', labels, annotations, status: 'firing', startsAt: STARTS_AT, endsAt: null }],
};

export const resolved: Notification = {
  status: 'resolved',
  alerts: [
    { fingerprint: 'fp_1', labels, annotations, status: 'resolved', startsAt: STARTS_AT, endsAt: ENDS_AT },
  ],
};

export const channel = (kind: OpenChannel['kind'], config: Record<string, unknown>): OpenChannel => ({
  id: 'chn_0123456789012345678901',
  name: `ops ${kind.toLowerCase()}`,
  kind,
  config,
});

/** A resolver that answers `address` for every name and records the names it was asked. */
export function fakeResolver(address: string) {
  const asked: string[] = [];
  const resolve: Resolver = async (hostname) => {
    asked.push(hostname);
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  };
  return { resolve, asked };
}

/**
 * A listener on a refused address (127.0.0.2, ::1) that counts TCP connections, HTTP or SMTP: the
 * proof that a refused destination was never connected to.
 */
export async function tripwire(host: string) {
  let hits = 0;
  const server: Server = createServer((_req, res) => res.end('ok'));
  server.on('connection', () => {
    hits++;
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    hits: () => hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * One tenant's DeliveryFailed group: 25 alerts listed (each its own connection and summary) and
 * 5 more the notice had no room for.
 */
export const group: Notification = {
  status: 'firing',
  truncatedAlerts: 5,
  alerts: Array.from({ length: 25 }, (_, i) => ({
    fingerprint: `fp_${i}`,
    labels: { ...labels, connectionId: `con_${i}` },
    annotations: { summary: `Deliveries to connection "shop ${i}" failed for good` },
    status: 'firing' as const,
    startsAt: STARTS_AT,
    endsAt: null,
  })),
};

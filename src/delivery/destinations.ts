import type { BrokerKind } from '../connections/connector.js';
import type { Destination } from './destination.js';

/**
 * Every kind of destination a worker sends to, as one (docs/decisions/0080): what a connector
 * renders says which — an HTTP request goes to `http`, a broker's message to the destination of its
 * `destination` kind. Nothing here or in the worker names a connector; a connector picks its kind by
 * what it renders, and a new broker is one more entry of `brokers`.
 */
export function destinationRegistry(
  http: Destination,
  brokers: Readonly<Record<BrokerKind, Destination>>,
): Destination {
  return {
    send: (prepared, budget) => {
      const { request } = prepared;
      const destination = request.method === 'PUBLISH' ? brokers[request.destination] : http;
      return destination.send(prepared, budget);
    },
    close: async () => {
      await Promise.all([http.close(), ...Object.values(brokers).map((broker) => broker.close())]);
    },
  };
}

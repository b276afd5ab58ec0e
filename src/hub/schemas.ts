import { Type } from 'typebox';

/**
 * A broker connector's (contract §21) mark, where the catalog and a connect link show a connector: where
 * each message carries its signature, in words. Shared by the hub's and the connect page's routes.
 */
export const BrokerSchema = Type.Object(
  {
    signatureCarrier: Type.String({
      description:
        'where each message carries webhook-signature for its consumer to verify, e.g. "AMQP header", ' +
        '"MQTT 5 user property"',
    }),
  },
  { description: 'a message broker connector (amqp, nats, redis, mqtt) only: it delivers to a broker' },
);

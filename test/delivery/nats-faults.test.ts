import { brokerFaultSuites } from '../helpers/broker-suite.js';
import { BROKERS } from '../helpers/brokers.js';

// A NATS server that goes away and comes back, one that stops answering (its PubAck never comes; the
// retry is de-duplicated by Nats-Msg-Id), one that goes away with a publish in flight, and a hub that
// allows no plaintext or an address outside DELIVERY_ALLOWED_CIDRS: as every broker (broker-suite.ts).

await brokerFaultSuites(BROKERS.nats);

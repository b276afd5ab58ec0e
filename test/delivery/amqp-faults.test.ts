import { brokerFaultSuites } from '../helpers/broker-suite.js';
import { BROKERS } from '../helpers/brokers.js';

// A RabbitMQ that goes away and comes back, one that stops answering, and a hub that allows no
// plaintext or an address §8 refuses: all of it as every broker does (broker-suite.ts).

await brokerFaultSuites(BROKERS.amqp);

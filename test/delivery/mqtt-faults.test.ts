import { brokerFaultSuites } from '../helpers/broker-suite.js';
import { BROKERS } from '../helpers/brokers.js';

// A Mosquitto that goes away and comes back, one that takes publishes but stops acknowledging them,
// one that goes away mid-publish, and a hub that allows no plaintext or an address §8 refuses: as every
// broker does (broker-suite.ts).

await brokerFaultSuites(BROKERS.mqtt);

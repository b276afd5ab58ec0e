// Whom a connection delivers to, in words: an HTTP receiver, or a message broker (contract §21). The
// catalog says which of its connector (`broker`), and an attempt says it of itself (a PUBLISH), so no
// word here depends on a connector's key.
import type { Connector, DeliveryAttempt } from '../common/routes.js';

/** What the UI calls the other end of a connection: the receiver of a request, or the broker. */
export type Destination = 'receiver' | 'broker';

/** A connector's destination, as its catalog entry says (unknown yet: a receiver's words). */
export const destinationOf = (connector: { broker?: Connector['broker'] } | undefined): Destination =>
  connector?.broker ? 'broker' : 'receiver';

/** An attempt's destination: a message to a broker is sent as a PUBLISH (contract §21). */
export const attemptDestination = (attempt: Pick<DeliveryAttempt, 'request'>): Destination =>
  attempt.request?.method === 'PUBLISH' ? 'broker' : 'receiver';

import type { AlertStatus } from '../../db/schema.js';
import type { ChannelKind } from './kinds.js';

/** One alert as channels see it (Alertmanager's model: labels identify it, annotations describe it). */
export interface AlertInstance {
  /** A hash of the labels: the same condition is the same alert. */
  fingerprint: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  status: AlertStatus;
  startsAt: Date;
  /** Set when resolved. */
  endsAt: Date | null;
}

/**
 * What one channel is sent at once: the notice of one `(alertname, tenantId)` group (or a test),
 * its alerts firing first, then those resolved since the channel last heard of the group.
 */
export interface Notification {
  /** The notice's ID, the same on every attempt (WEBHOOK sends it as webhook-id); new when absent. */
  id?: string;
  /** Firing while any of its alerts fires. */
  status: AlertStatus;
  alerts: AlertInstance[];
  /** Alerts of the group the notice had no room to list. */
  truncatedAlerts?: number;
}

/** A channel opened for sending: its config with its secret fields filled in. */
export interface OpenChannel {
  id: string;
  name: string;
  kind: ChannelKind;
  config: Record<string, unknown>;
}

/** The answer of `POST …/channels/:id/test` (docs/operators/alerting.md), and of every send. */
export interface ChannelSendResult {
  ok: boolean;
  /** The HTTP status, or the SMTP reply code; null when no answer came. */
  responseStatus: number | null;
  /** What went wrong, in words that never quote a secret; null when ok. */
  error: string | null;
}

/** Sends notifications to channels of any kind (see senders/). */
export interface ChannelSender {
  send(channel: OpenChannel, notification: Notification): Promise<ChannelSendResult>;
  close(): Promise<void>;
}

import type { Config } from '../config.js';
import { loadConnectorCatalog } from '../connections/catalog.js';
import { openStorage } from '../db/storage.js';
import { createWakeup } from '../delivery/wakeup.js';
import { startDeliveryWorkers } from '../delivery/worker.js';
import { createMetrics } from '../http/metrics.js';
import { createLogger } from '../logger.js';
import { startAlertEngine } from '../platform/alerting/engine.js';
import { createChannelSender } from '../platform/alerting/senders/index.js';
import { startHistorySampler } from '../platform/history.js';
import { startTelemetry } from '../telemetry/start.js';
import { closeOnSignal } from './shutdown.js';

/** `hubgate worker`: delivery workers and the alert engine, until SIGINT or SIGTERM (docs/operators/deployment.md). */
export async function worker(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const { database, keyring } = await openStorage(config, logger);
  const catalog = await loadConnectorCatalog(config.disabledConnectors);
  const now = () => new Date();
  const tracing = await startTelemetry(config.telemetry, logger);
  const ctx = {
    config,
    database,
    db: database.kysely,
    keyring,
    log: logger,
    metrics: createMetrics(),
    now,
    tracing,
  };
  const workers = await startDeliveryWorkers({ ctx, catalog }, database, createWakeup(), {});
  const sender = createChannelSender({
    policy: config.delivery,
    timeoutMs: config.delivery.timeoutMs,
    publicUrl: config.publicUrl.origin,
    now,
  });
  const alerts = startAlertEngine(ctx, sender);
  const history = startHistorySampler(ctx);
  closeOnSignal({
    logger,
    database,
    graceMs: config.shutdownGraceMs,
    stop: async () => {
      await Promise.all([workers.stop(), alerts.stop(), history.stop()]);
      await sender.close();
      await tracing?.close();
    },
    inFlight: async () => ({ deliveriesInFlight: workers.inFlight() }),
  });
  logger.info({ engine: database.engine }, 'hubgate worker running');
}

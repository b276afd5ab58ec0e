import { context, trace } from '@opentelemetry/api';
import pino, { type Logger } from 'pino';

/** The active span's IDs, as a log line carries them; nothing when no span is active. */
function activeTraceIds(): Record<string, string> {
  const span = trace.getSpan(context.active())?.spanContext();
  return span ? { trace_id: span.traceId, span_id: span.spanId } : {};
}

/**
 * Every line of `logger` and of its children written while a span is active carries its `trace_id`
 * and `span_id`, through pino's mixin. Set on the logger made at start-up (createLogger), and only
 * with tracing on: with it off no line pays for a mixin. Answers the function that takes it off.
 */
export function addTraceIds(logger: Logger): () => void {
  const internals = logger as unknown as Record<symbol, unknown>;
  internals[pino.symbols.mixinSym] = activeTraceIds;
  return () => {
    if (internals[pino.symbols.mixinSym] === activeTraceIds) internals[pino.symbols.mixinSym] = undefined;
  };
}

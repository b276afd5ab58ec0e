import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { accessLineWriter, createLogger } from '../../src/logger.js';
import { addTraceIds } from '../../src/telemetry/logs.js';

function capturing() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger('info', sink), lines };
}

const withoutTime = (text: string) => text.replace(/,"time":[0-9]+,/, ',"time":0,');
const ids = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };

test("with tracing on, the access line is what pino's mixin writes for the request's span", () => {
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  try {
    const pinoOwn = capturing();
    const removeTraceIds = addTraceIds(pinoOwn.logger);
    const active = trace.setSpanContext(ROOT_CONTEXT, ids);
    const fields = { method: 'POST', path: '/api/v1/integrations/events', statusCode: 202, ms: 3.1 };
    context.with(active, () => pinoOwn.logger.child({ requestId: 'req_a' }).info(fields, 'request'));
    const written = capturing();
    accessLineWriter(written.logger)({
      requestId: 'req_a',
      ...fields,
      trace: { trace_id: ids.traceId, span_id: ids.spanId },
    });
    assert.equal(
      withoutTime(written.lines.join('')),
      withoutTime(pinoOwn.lines.join('')),
      'the access line with trace IDs differs from the line pino writes with its mixin',
    );

    removeTraceIds();
    pinoOwn.lines.length = 0;
    context.with(active, () => pinoOwn.logger.info('after'));
    assert.ok(!pinoOwn.lines.join('').includes('trace_id'), 'a line carries trace IDs after tracing closed');
  } finally {
    context.disable();
  }
});

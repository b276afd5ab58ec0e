import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

// The part of OTLP's trace protocol (opentelemetry-proto, trace/v1 and its collector request) a test
// reads: spans with their attributes, links and status, and the resource.
const OTLP_TRACE_PROTO = `
syntax = "proto3";
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { Scope scope = 1; repeated Span spans = 2; }
message Scope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  repeated KeyValue attributes = 9; repeated Link links = 13; Status status = 15;
}
message Link { bytes trace_id = 1; bytes span_id = 2; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; }
}
`;
const ExportRequest = protobuf.parse(OTLP_TRACE_PROTO).root.lookupType('ExportTraceServiceRequest');

type Value = string | number | boolean;

/** A span as a test reads it, whichever encoding brought it. */
export interface ExportedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 2 server, 3 client, 4 producer. */
  kind: number;
  attributes: Record<string, Value>;
  links: Array<{ traceId: string; spanId: string }>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  resource: Record<string, Value>;
}

// Protobuf bytes are hex in a test's eyes; OTLP/JSON already writes IDs as hex strings.
const hex = (id: unknown): string =>
  id instanceof Uint8Array ? Buffer.from(id).toString('hex') : typeof id === 'string' ? id : '';

interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}
interface RawKeyValue {
  key: string;
  value?: AnyValue;
}

function valueOf(value: AnyValue | undefined): Value {
  if (value?.stringValue !== undefined) return value.stringValue;
  if (value?.boolValue !== undefined) return value.boolValue;
  if (value?.intValue !== undefined) return Number(value.intValue);
  return value?.doubleValue ?? '';
}

const attributesOf = (list: RawKeyValue[] | undefined): Record<string, Value> =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));

interface RawSpan {
  traceId: unknown;
  spanId: unknown;
  parentSpanId?: unknown;
  name: string;
  kind?: number;
  attributes?: RawKeyValue[];
  links?: Array<{ traceId: unknown; spanId: unknown }>;
  status?: { code?: number };
}
interface RawRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: RawKeyValue[] };
    scopeSpans?: Array<{ spans?: RawSpan[] }>;
  }>;
}

function spansOf(request: RawRequest): ExportedSpan[] {
  return (request.resourceSpans ?? []).flatMap((rs) => {
    const resource = attributesOf(rs.resource?.attributes);
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((span) => ({
        traceId: hex(span.traceId),
        spanId: hex(span.spanId),
        parentSpanId: hex(span.parentSpanId),
        name: span.name,
        kind: span.kind ?? 0,
        attributes: attributesOf(span.attributes),
        links: (span.links ?? []).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
        statusCode: span.status?.code ?? 0,
        resource,
      })),
    );
  });
}

/**
 * An OTLP/HTTP collector on 127.0.0.1 for one test: records every POST /v1/traces, decoding
 * http/protobuf with the descriptor above and http/json with JSON.parse, and keeps the raw bytes
 * so a test can search them for secrets.
 */
export async function startOtlpSink() {
  const spans: ExportedSpan[] = [];
  const bodies: Buffer[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      bodies.push(body);
      const type = req.headers['content-type'] ?? '';
      contentTypes.push(type);
      if (req.url === '/v1/traces' && req.method === 'POST') {
        const decoded = type.includes('json')
          ? (JSON.parse(body.toString('utf8')) as RawRequest)
          : (ExportRequest.toObject(ExportRequest.decode(body), { longs: String }) as RawRequest);
        spans.push(...spansOf(decoded));
      }
      res.writeHead(200, { 'content-type': type || 'application/json' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    /** Every export as it came, one entry per request (any path). */
    bodies,
    contentTypes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

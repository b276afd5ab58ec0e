import { ConfigError, type Values } from '../config/table.js';
import { VERSION } from '../version.js';

export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** Which traces are recorded: OpenTelemetry's standard samplers, by their `OTEL_TRACES_SAMPLER` names. */
export interface SamplerConfig {
  /** Follow an incoming `traceparent`'s sampled flag, and decide only for new traces. */
  parentBased: boolean;
  /** The share of new traces recorded: 1 (always_on), 0 (always_off) or the ratio. */
  ratio: number;
}

/** Tracing as the `OTEL_*` variables ask for it (docs/operators/telemetry.md); null in Config: off. */
export interface TelemetryConfig {
  /** Where spans are posted, `…/v1/traces` already appended to a bare endpoint. */
  url: string;
  protocol: OtlpProtocol;
  /** Sent with every export (a vendor's API key): never logged. */
  headers: Record<string, string>;
  timeoutMs: number;
  /** Resource attributes: `service.name` and `service.version` included. */
  resource: Record<string, string>;
  sampler: SamplerConfig;
}

/** The traces URL the OTLP specification derives from the variables (specific as given, else base + v1/traces). */
function tracesUrl(values: Values): string | undefined {
  const specific = values.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (specific !== undefined) return checkedUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', specific);
  const base = values.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (base === undefined) return undefined;
  checkedUrl('OTEL_EXPORTER_OTLP_ENDPOINT', base);
  return `${base.endsWith('/') ? base : `${base}/`}v1/traces`;
}

function checkedUrl(name: string, url: string): string {
  if (!URL.canParse(url)) throw new ConfigError(`invalid ${name}=${JSON.stringify(url)}: expected a URL`);
  return url;
}

/**
 * `key=value,…` with values percent-decoded, as OpenTelemetry's SDKs read these variables (written out
 * here: the SDK's parser is not loaded while tracing is off). A value that does not decode stops
 * start-up, without being echoed: it may be a key.
 */
function pairs(name: string, raw: string | undefined, secret: boolean): Record<string, string> {
  const read: Record<string, string> = {};
  if (raw === undefined) return read;
  for (const entry of raw.split(',')) {
    const equals = entry.indexOf('=');
    const key = entry.slice(0, equals).trim();
    try {
      read[key] = decodeURIComponent(entry.slice(equals + 1).trim());
    } catch {
      const shown = secret ? '' : `=${JSON.stringify(raw)}`;
      throw new ConfigError(
        `invalid ${name}${shown}: expected comma-separated key=value pairs, values percent-encoded`,
      );
    }
  }
  return read;
}

function sampler(values: Values): SamplerConfig {
  const name = values.OTEL_TRACES_SAMPLER;
  const parentBased = name.startsWith('parentbased_');
  const root = parentBased ? name.slice('parentbased_'.length) : name;
  const ratio = root === 'always_on' ? 1 : root === 'always_off' ? 0 : (values.OTEL_TRACES_SAMPLER_ARG ?? 1);
  return { parentBased, ratio };
}

/**
 * Tracing's settings, or null when it is off: no endpoint, `OTEL_TRACES_EXPORTER=none` or
 * `OTEL_SDK_DISABLED=true`. Every variable was checked alone by the table; this joins them.
 */
export function telemetryConfig(values: Values): TelemetryConfig | null {
  const url = tracesUrl(values);
  if (url === undefined || values.OTEL_SDK_DISABLED || values.OTEL_TRACES_EXPORTER === 'none') return null;
  const resource: Record<string, string> = {
    'service.name': 'hubgate',
    'service.version': VERSION,
    ...pairs('OTEL_RESOURCE_ATTRIBUTES', values.OTEL_RESOURCE_ATTRIBUTES, false),
  };
  if (values.OTEL_SERVICE_NAME !== undefined) resource['service.name'] = values.OTEL_SERVICE_NAME;
  return {
    url,
    protocol: values.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? values.OTEL_EXPORTER_OTLP_PROTOCOL,
    headers: {
      ...pairs('OTEL_EXPORTER_OTLP_HEADERS', values.OTEL_EXPORTER_OTLP_HEADERS, true),
      ...pairs('OTEL_EXPORTER_OTLP_TRACES_HEADERS', values.OTEL_EXPORTER_OTLP_TRACES_HEADERS, true),
    },
    timeoutMs: values.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? values.OTEL_EXPORTER_OTLP_TIMEOUT,
    resource,
    sampler: sampler(values),
  };
}

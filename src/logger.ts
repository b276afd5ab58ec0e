import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Structured logs. Request bodies and headers are never logged (Fastify's request serializer omits
 * them); the redaction list is a second line of defence for anything that names a credential.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.secret',
  '*.token',
  '*.signingSecret',
  '*.authorization',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'hubgate' },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination) : pino(options);
}

// Secrets a receiver echoes back, taken out of the answer the event log keeps (docs/decisions/0063):
// the sender applies this to every answer it keeps for the log, headers and body, before cutting the
// body to the bytes kept, so that a secret across that cut is hidden whole.

export const REDACTED = '[redacted]';

// Forms derived from a secret (a URL's path, its last segment) shorter than this are not secret on
// their own, and hiding them would mangle ordinary words of an answer. A secret itself is hidden
// whatever its length, as the request record hides it.
const MIN_DERIVED_LENGTH = 6;

/**
 * The end of a kept body that begins a secret but is cut off by the last byte read (the 64 KiB
 * read limit) is hidden from this many bytes on: at most this many less one bytes of a secret's
 * start can remain there, and a shorter tail says nothing.
 */
export const MIN_CUT_SECRET_BYTES = 4;

const percentLower = (text: string) => text.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
/** As a JSON string's content, every character beyond ASCII as `\uXXXX` (what many encoders write). */
const jsonAscii = (json: string) =>
  json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** How a value may come back inside JSON, a URL or a form: each spelling of it is hidden. */
function encodings(value: string, into: Set<string>): void {
  const json = JSON.stringify(value).slice(1, -1);
  const component = encodeURIComponent(value);
  const uri = encodeURI(value);
  into.add(value).add(json).add(component).add(uri);
  // PHP's json_encode and others escape the slash.
  if (json.includes('/')) into.add(json.replaceAll('/', '\\/'));
  if (/[\u0080-\uffff]/.test(json)) into.add(jsonAscii(json));
  if (component.includes('%')) into.add(percentLower(component)).add(component.replaceAll('%20', '+'));
  if (uri.includes('%')) into.add(percentLower(uri));
}

/**
 * Every spelling of the secrets an answer may echo, longest first: each secret as it is, JSON-
 * escaped and URL-encoded; for a secret that is a URL (Slack's webhook URL), also its path with
 * the query, its path, and its last path segment (Slack's secret part), in the same encodings.
 */
export function spellingsOf(secrets: readonly string[]): string[] {
  const found = new Set<string>();
  for (const secret of secrets) {
    if (secret.length === 0) continue;
    encodings(secret, found);
    if (!/^https?:\/\//i.test(secret) || !URL.canParse(secret)) continue;
    const url = new URL(secret);
    const last = url.pathname.split('/').filter(Boolean).at(-1) ?? '';
    for (const part of [`${url.pathname}${url.search}`, url.pathname, url.search.slice(1), last]) {
      if (part.length < MIN_DERIVED_LENGTH) continue;
      encodings(part, found);
      // The path as a server decodes it, when the URL held escapes.
      found.add(safeDecode(part));
    }
  }
  return [...found].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `text` with every spelling in it replaced by [redacted] (a header's name or value). */
export function redactText(text: string, spellings: readonly string[]): string {
  let redacted = text;
  for (const spelling of spellings) {
    if (redacted.includes(spelling)) redacted = redacted.split(spelling).join(REDACTED);
  }
  return redacted;
}

/** Byte ranges [start, end) of `bytes` where a spelling stands. */
function secretRanges(bytes: Buffer, spellings: readonly Buffer[]): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (const spelling of spellings) {
    for (let at = bytes.indexOf(spelling); at !== -1; at = bytes.indexOf(spelling, at + 1)) {
      ranges.push([at, at + spelling.length]);
    }
  }
  return ranges;
}

/** The ranges in order, those that overlap or touch merged into one. */
function merged(ranges: Array<[number, number]>): Array<[number, number]> {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const [start, end] of sorted) {
    const last = out.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else out.push([start, end]);
  }
  return out;
}

/**
 * Where the end of `bytes` begins a spelling that the end cut off, at least MIN_CUT_SECRET_BYTES of
 * it, starting before `kept` (a tail after the kept bytes is not kept anyway); the earliest such start.
 */
function cutSecretStart(bytes: Buffer, kept: number, spellings: readonly Buffer[]): number | null {
  let start: number | null = null;
  const last = bytes.length - MIN_CUT_SECRET_BYTES;
  for (const spelling of spellings) {
    if (spelling.length <= MIN_CUT_SECRET_BYTES) continue;
    const head = spelling.subarray(0, MIN_CUT_SECRET_BYTES);
    const from = Math.max(0, bytes.length - spelling.length + 1);
    for (
      let at = bytes.indexOf(head, from);
      at !== -1 && at <= last && at < kept;
      at = bytes.indexOf(head, at + 1)
    ) {
      if (bytes.compare(spelling, 0, bytes.length - at, at) === 0) {
        if (start === null || at < start) start = at;
        break;
      }
    }
  }
  return start;
}

/** Bytes read beyond those kept, so that a secret across the cut is still seen whole. */
export function lookaheadBytes(spellings: readonly string[]): number {
  return spellings.reduce((longest, s) => Math.max(longest, Buffer.byteLength(s)), 0);
}

/**
 * The first `keep` bytes of an answer's body as UTF-8 text (bad bytes replaced), with every
 * spelling of a secret in them replaced by [redacted]. `read` holds what was read of the body: the
 * kept bytes and up to `lookaheadBytes` more, so a secret that starts in the kept part and ends
 * after it is found and hidden whole. `ended` says whether the body ended within `read`: when it
 * did not, the end of `read` may be the start of a secret the read cut off, and those bytes are
 * hidden too (from MIN_CUT_SECRET_BYTES on).
 */
export function redactBody(read: Buffer, keep: number, ended: boolean, spellings: readonly string[]): string {
  const kept = Math.min(keep, read.length);
  if (spellings.length === 0) return read.subarray(0, kept).toString('utf8');
  const patterns = spellings.map((s) => Buffer.from(s, 'utf8'));
  const ranges = secretRanges(read, patterns);
  if (!ended) {
    const start = cutSecretStart(read, kept, patterns);
    if (start !== null) ranges.push([start, read.length]);
  }
  let text = '';
  let at = 0;
  for (const [start, end] of merged(ranges)) {
    if (start >= kept) break;
    text += read.subarray(at, start).toString('utf8') + REDACTED;
    at = end;
    if (at >= kept) return text;
  }
  return text + read.subarray(at, kept).toString('utf8');
}

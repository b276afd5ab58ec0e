// An audit entry's metadata in words (docs/operators/web-ui.md): a few facts in one line, read by the
// entry's action where a name means different things (the `fields` of a credential binding are the
// credentials bound; of an edit, the fields changed). Never the raw JSON.
import type { ComponentChildren } from 'preact';
import { formatDate, moduleName, plural, roleName, scopeSummary } from '../common/format.js';
import {
  fieldList,
  fieldWords,
  GRANT_WORDS,
  METHOD_WORDS,
  PAUSE_WORDS,
  SIGN_IN_REFUSAL_WORDS,
} from './words.js';

const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

const isText = (value: unknown): value is string | number | boolean =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
const textList = (value: unknown): string[] | null =>
  Array.isArray(value) && value.every(isText) ? value.map(String) : null;
const modules = (value: unknown): string => {
  const list = textList(value);
  return list ? (list.length ? list.map(moduleName).join(', ') : 'none') : '';
};
const span = (seconds: number): string =>
  seconds % 3600 === 0 ? plural(seconds / 3600, 'hour') : plural(Math.round(seconds / 60), 'minute');
const count = (value: unknown, one: string, many?: string): string | null =>
  typeof value === 'number' && value > 0 ? plural(value, one, many) : null;
const mono = (text: string) => <span class="mono">{text}</span>;

type Say = (value: unknown, action: string, metadata: Record<string, unknown>) => ComponentChildren | null;
const quoted: Say = (v) => (isText(v) ? `“${v}”` : null);
const silent: Say = () => null;

/** OAuth2 scopes are the provider's own words: listed as they are. API key scopes are hubgate's. */
const scopes: Say = (v, action) => {
  const list = textList(v);
  if (!list) return null;
  if (action.startsWith('api_key.')) return scopeSummary(list);
  if (list.length === 0) return 'no scopes';
  return <span>scopes {mono(list.join(' '))}</span>;
};

/** `fields`: the credentials bound by a binding; the fields changed by an edit. */
const fields: Say = (v, action) => {
  const list = textList(v);
  if (!list) return null;
  if (action === 'connection.credentials.bind') return `credentials: ${fieldList(list)}`;
  return list.length ? `changed: ${fieldList(list)}` : null;
};

/** `before` and `after`: modules of an organization, or a person's role. */
const after: Say = (v, action, metadata) => {
  if (action === 'user.role.update')
    return isText(v) && isText(metadata.before)
      ? `role: ${roleName(String(metadata.before))} → ${roleName(String(v))}`
      : null;
  return 'before' in metadata
    ? `modules: ${modules(metadata.before)} → ${modules(v)}`
    : `modules: ${modules(v)}`;
};

const expires: Say = (v, action) => {
  if (typeof v !== 'string') return null;
  if (action === 'user.invite') return `link valid until ${formatDate(v)}`;
  if (action === 'connection.authorize') return `access until ${formatDate(v)}`;
  return `expires ${dateOnly.format(new Date(v))}`;
};

const reason: Say = (v, action) => {
  if (!isText(v)) return null;
  const words = action === 'connection.pause' ? PAUSE_WORDS[String(v)] : SIGN_IN_REFUSAL_WORDS[String(v)];
  return action === 'connection.pause' ? `paused ${words ?? String(v)}` : (words ?? fieldWords(String(v)));
};

const enabled: Say = (v, action) => {
  if (typeof v !== 'boolean') return null;
  if (action === 'user.password_sign_in.update') return v ? 'turned on' : 'turned off';
  return v ? 'enabled' : 'disabled';
};

const overlapSaid: Say = (v) =>
  typeof v === 'number' ? (v > 0 ? `old secret kept for ${span(v)}` : 'old secret stopped at once') : null;

/** How each fact of an entry's metadata reads, in the order they are said; null says nothing. */
const FACTS: Array<[string, Say]> = [
  ['name', quoted],
  ['displayName', quoted],
  ['organizationName', quoted],
  ['email', (v) => (isText(v) ? String(v) : null)],
  ['method', (v) => (isText(v) ? (METHOD_WORDS[String(v)] ?? `with ${fieldWords(String(v))}`) : null)],
  ['reason', reason],
  ['passkey', (v) => (isText(v) ? `passkey “${v}”` : null)],
  ['principal', (v) => (isText(v) ? <span>as {mono(String(v))}</span> : null)],
  ['role', (v) => (isText(v) ? roleName(String(v)) : null)],
  ['status', (v) => (v === 'invited' ? 'invitation not yet accepted' : null)],
  ['prefix', (v) => (isText(v) ? <span class="mono">{v}…</span> : null)],
  ['grant', (v) => (isText(v) ? (GRANT_WORDS[String(v)] ?? fieldWords(String(v))) : null)],
  ['scopes', scopes],
  ['expiresAt', expires],
  ['previousSecretValidForSeconds', overlapSaid],
  // A source's rotation (docs/api/sources.md): the same words as a key's.
  ['previousValidForSeconds', overlapSaid],
  ['scheme', (v) => (isText(v) ? `${v} scheme` : null)],
  ['changed', (v) => (textList(v)?.length ? `changed: ${fieldList(textList(v) ?? [])}` : null)],
  ['connectorKey', (v) => (isText(v) ? `${v} connector` : null)],
  ['entitlements', (v) => `modules: ${modules(v)}`],
  ['before', silent],
  ['after', after],
  ['fields', fields],
  ['changedFields', fields],
  [
    'frameAncestors',
    (v) => {
      const list = textList(v);
      if (!list) return null;
      return list.length ? <span>may be framed by {mono(list.join(' '))}</span> : 'may be framed by no site';
    },
  ],
  ['enabled', enabled],
  ['deprecated', (v) => (v === true ? 'deprecated' : null)],
  ['hasSchema', (v) => (typeof v === 'boolean' ? (v ? 'with a schema' : 'no schema') : null)],
  ['authorized', (v) => (v === true ? 'connected at creation' : null)],
  ['refreshToken', (v) => (v === true ? 'with a refresh token' : null)],
  ['error', (v) => (isText(v) ? `the provider said: ${v}` : null)],
  ['credentialsUnbound', (v) => (v === true ? 'credentials unbound: the host changed' : null)],
  [
    'previousValidUntil',
    (v) => (typeof v === 'string' ? `old credentials valid until ${formatDate(v)}` : null),
  ],
  [
    'cancelledDeliveries',
    (v) => (count(v, 'delivery', 'deliveries') ? `${count(v, 'delivery', 'deliveries')} cancelled` : null),
  ],
  [
    'skippedDeliveries',
    (v) => (count(v, 'delivery', 'deliveries') ? `${count(v, 'delivery', 'deliveries')} skipped` : null),
  ],
  [
    'replayed',
    (v) =>
      count(v, 'skipped delivery', 'skipped deliveries')
        ? `${count(v, 'skipped delivery', 'skipped deliveries')} sent again`
        : null,
  ],
  ['statuses', (v) => (textList(v) ? `${textList(v)?.join(' and ')} deliveries` : null)],
  ['since', (v) => (typeof v === 'string' ? `from ${formatDate(v)}` : null)],
  ['until', (v) => (typeof v === 'string' ? `until ${formatDate(v)}` : null)],
  ['queued', (v) => (typeof v === 'number' ? `${plural(v, 'delivery', 'deliveries')} queued again` : null)],
  ['limited', (v) => (v === true ? 'the first 10,000: recover again for more' : null)],
  ['type', (v) => (isText(v) ? <span>event type {mono(String(v))}</span> : null)],
  [
    'passwordSessionsEnded',
    (v) => (count(v, 'password session') ? `${count(v, 'password session')} ended` : null),
  ],
  ['again', (v) => (v === true ? 'a new link' : null)],
  ['linkEnded', (v) => (v === true ? 'the invitation link ended' : null)],
  ['revision', (v) => (isText(v) ? `revision ${v}` : null)],
  ['ruleCount', (v) => (typeof v === 'number' ? plural(v, 'rule') : null)],
  [
    'platformKeyPrefix',
    (v) =>
      isText(v) ? (
        <span>
          platform key <span class="mono">{v}…</span>
        </span>
      ) : null,
  ],
  // Facts kept for investigators, not for this one line: IDs, URLs, settings, fingerprints.
  ['config', silent],
  ['generated', silent],
  ['platformKeyId', silent],
  ['eventId', silent],
  ['deliveryId', silent],
  ['pausedReason', silent],
  ['aaguid', silent],
  ['backupEligible', silent],
  ['secretFields', silent],
  ['kind', silent],
  ['authorizationUrl', silent],
  ['tokenUrl', silent],
  ['apiBaseUrl', silent],
  ['clientId', silent],
  ['previousRevision', silent],
  ['channelIds', silent],
];
const KNOWN = new Set(FACTS.map(([name]) => name));

/** A few facts of the entry's metadata, in words; never the raw JSON. */
export function facts(action: string, metadata: Record<string, unknown>): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  for (const [name, say] of FACTS) {
    const said = name in metadata ? say(metadata[name], action, metadata) : null;
    if (said !== null && said !== '') out.push(said);
  }
  // Anything else simple is said as "its name in words: value"; nested objects are left out.
  for (const [name, value] of Object.entries(metadata)) {
    if (KNOWN.has(name)) continue;
    if (isText(value)) out.push(`${fieldWords(name)}: ${String(value)}`);
    else if (textList(value)) out.push(`${fieldWords(name)}: ${textList(value)?.join(', ')}`);
  }
  return out;
}

/** The facts in one line, separated by a dot that a screen reader hears as a comma. */
export function Details({ action, metadata }: { action: string; metadata: Record<string, unknown> }) {
  const parts = facts(action, metadata);
  if (parts.length === 0) return null;
  return (
    <span class="audit-details">
      {parts.map((part, i) => (
        <span key={i}>
          {i > 0 ? <span aria-hidden="true"> · </span> : null}
          {i > 0 ? <span class="visually-hidden">, </span> : null}
          {part}
        </span>
      ))}
    </span>
  );
}

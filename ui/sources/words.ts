// The sources pages' words (docs/api/sources.md): each scheme's name and where its provider shows the
// secret, each request outcome, and the UI's addresses of a source. Plain data and functions, no DOM, so
// that a unit test loads them.
import { withQuery } from '../common/api.js';
import type { SourceOutcome } from '../common/routes.js';

export interface SchemeWords {
  /** The scheme's name as the API takes it. */
  name: string;
  label: string;
  /** What sends with it, under the choice. */
  description: string;
  /** Where the provider shows (or lets you choose) the secret, under the secret field. */
  secretHint: string;
  /** What the secret field says when left empty where it is required. */
  secretMissing: string;
  /** hubgate makes the secret when none is typed (standard-webhooks only). */
  generates: boolean;
}

/** The schemes in the order the form offers them: the providers by name, the open ones last. */
export const SCHEMES: readonly SchemeWords[] = [
  {
    name: 'github',
    label: 'GitHub',
    secretMissing: 'Paste the secret from GitHub.',
    description: 'A repository’s, organization’s or app’s webhooks (X-Hub-Signature-256).',
    secretHint:
      'The webhook secret you choose in GitHub (Settings → Webhooks → Secret): type the same value here and there.',
    generates: false,
  },
  {
    name: 'stripe',
    label: 'Stripe',
    secretMissing: 'Paste the secret from Stripe.',
    description: 'A Stripe webhook endpoint (Stripe-Signature).',
    secretHint:
      'The endpoint’s signing secret, whsec_…: in Stripe’s Dashboard, Developers → Webhooks → your endpoint → Signing secret → Reveal.',
    generates: false,
  },
  {
    name: 'slack',
    label: 'Slack',
    secretMissing: 'Paste the secret from Slack.',
    description: 'A Slack app’s Events API requests (X-Slack-Signature).',
    secretHint:
      'Your app’s Signing Secret: api.slack.com/apps → your app → Basic Information → App Credentials.',
    generates: false,
  },
  {
    name: 'shopify',
    label: 'Shopify',
    secretMissing: 'Paste the secret from Shopify.',
    description: 'A Shopify app’s webhooks (X-Shopify-Hmac-Sha256).',
    secretHint:
      'Your app’s client secret: in the Partner Dashboard (or the store admin’s app settings) → API credentials.',
    generates: false,
  },
  {
    name: 'standard-webhooks',
    label: 'Standard Webhooks',
    secretMissing: '',
    description: 'Any sender that follows standardwebhooks.com (webhook-id, webhook-signature), e.g. Svix.',
    secretHint:
      'Leave it empty and hubgate makes one (whsec_…), shown once to give to the sender; or paste the whsec_… secret the sender gave you.',
    generates: true,
  },
  {
    name: 'hmac',
    label: 'Other: HMAC-SHA256',
    secretMissing: 'Enter the secret the sender signs with.',
    description: 'Any sender that signs the body with HMAC-SHA256 in a header of its own.',
    secretHint: 'The secret the sender signs with, as it gave it to you or as you gave it.',
    generates: false,
  },
];

/** A scheme's words by its name; a scheme this UI does not know is said as its name. */
export function schemeWords(name: string): SchemeWords {
  return (
    SCHEMES.find((scheme) => scheme.name === name) ?? {
      name,
      label: name,
      description: '',
      secretHint: 'The secret the sender signs with.',
      secretMissing: 'Enter the secret the sender signs with.',
      generates: false,
    }
  );
}

/** Each outcome of a request at the ingest URL (docs/api/sources.md), as the log and its filter say it. */
export const OUTCOME_WORDS: Record<SourceOutcome, string> = {
  accepted: 'Accepted',
  duplicate: 'Duplicate',
  invalid_signature: 'Invalid signature',
  rejected: 'Rejected',
  rate_limited: 'Rate limited',
  paused: 'Paused',
};

/** What each outcome means, beside the badge's word. */
export const OUTCOME_HELP: Record<SourceOutcome, string> = {
  accepted: 'verified and published as an event',
  duplicate: 'a delivery ID seen in the last 7 days: nothing new was published',
  invalid_signature: 'a missing or wrong signature, or a stale timestamp: refused with 401',
  rejected:
    'signed, but refused: not a JSON object, no event type where the scheme finds it, or the event type’s schema did not match',
  rate_limited: 'over the source’s requests per second: refused with 429',
  paused: 'the source was paused: refused with 503',
};

/** The badge tone of an outcome: the word carries the meaning, the colour agrees with it. */
export const OUTCOME_TONES: Record<SourceOutcome, 'good' | 'bad' | 'warn' | 'neutral'> = {
  accepted: 'good',
  duplicate: 'neutral',
  invalid_signature: 'bad',
  rejected: 'bad',
  rate_limited: 'warn',
  paused: 'warn',
};

export const OUTCOMES = Object.keys(OUTCOME_WORDS) as SourceOutcome[];

export const isOutcome = (value: string | undefined): value is SourceOutcome =>
  value !== undefined && (OUTCOMES as string[]).includes(value);

/** How many seconds the old secret may keep verifying after a rotation (`previousValidForSeconds`). */
export const SECRET_OVERLAPS = [
  { seconds: 0, label: 'Stop the old secret now', help: 'Choose this if the secret may have leaked.' },
  {
    seconds: 3600,
    label: 'Keep the old secret verifying for 1 hour',
    help: 'Time to put the new secret in place at the provider without refusing its requests.',
  },
  {
    seconds: 86_400,
    label: 'Keep the old secret verifying for 24 hours',
    help: 'For a provider whose settings take longer to change.',
  },
] as const;

/** The sources page, and a source's page (its request log), with the log's outcome filter. */
export const SOURCES_PAGE = '/sources';
export const sourcePage = (id: string, outcome?: SourceOutcome | null, cursor?: string | null): string =>
  withQuery(`/sources/${encodeURIComponent(id)}`, { outcome, cursor });

/**
 * Whether a connection's `eventTypes` (patterns where `*` is any run of characters; absent: every type)
 * take `type`, as the server's fan-out decides (src/connections/event-types.ts): the connections whose
 * event log may hold a source's event.
 */
export function takesEventType(patterns: unknown, type: string): boolean {
  if (!Array.isArray(patterns)) return true;
  return patterns.some((pattern) => {
    if (typeof pattern !== 'string') return false;
    const pieces = pattern.split('*');
    if (pieces.length === 1) return pattern === type;
    const first = pieces[0] ?? '';
    const last = pieces[pieces.length - 1] ?? '';
    const end = type.length - last.length;
    if (end < first.length || !type.startsWith(first) || !type.endsWith(last)) return false;
    let at = first.length;
    for (const piece of pieces.slice(1, -1)) {
      const found = type.indexOf(piece, at);
      if (found < 0 || found + piece.length > end) return false;
      at = found + piece.length;
    }
    return true;
  });
}

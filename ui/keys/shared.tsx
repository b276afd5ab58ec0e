// What the create and rotate dialogs share: a key's expiry as the forms choose it (and as the API
// takes it), and how the new secret is used.
import { Field } from '../common/Field.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** The choices offered; the API takes anything from 1 minute to 366 days ahead. */
const EXPIRY_DAYS = [7, 30, 90, 180, 365] as const;
/** The longest a custom date may be ahead, so that its end of day stays within the API's 366 days. */
const MAX_CUSTOM_DAYS = 365;

/** `choice` is a number of days, `date` (a day picked in the date field) or `keep` (rotation only). */
interface ExpiryValue {
  choice: string;
  date: string;
}
export const DEFAULT_EXPIRY: ExpiryValue = { choice: '90', date: '' };
export const KEEP_EXPIRY: ExpiryValue = { choice: 'keep', date: '' };

const day = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const pad = (n: number) => String(n).padStart(2, '0');
/** A local calendar day as `<input type="date">` writes it. */
const isoDay = (at: Date) => `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}`;

/** The end (23:59:59, local time) of a `yyyy-mm-dd` day, or null if it is not one. */
function endOfDay(value: string): Date | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return null;
  const at = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]), 23, 59, 59);
  return Number.isNaN(at.getTime()) ? null : at;
}

/** What is wrong with the choice before it is sent, in words; undefined when it is fine. */
export function expiryProblem(value: ExpiryValue, now = new Date()): string | undefined {
  if (value.choice !== 'date') return undefined;
  if (!value.date) return 'Choose a date.';
  const at = endOfDay(value.date);
  const latest = new Date(now.getTime() + MAX_CUSTOM_DAYS * DAY_MS);
  if (!at || at.getTime() <= now.getTime() + 60_000 || isoDay(at) > isoDay(latest)) {
    return `Choose a day from today to ${day.format(latest)}.`;
  }
  return undefined;
}

/** The RFC 3339 `expiresAt` to send, or undefined to keep the current one. */
export function expiresAtOf(value: ExpiryValue, now = new Date()): string | undefined {
  if (value.choice === 'keep') return undefined;
  if (value.choice === 'date') return endOfDay(value.date)?.toISOString();
  return new Date(now.getTime() + Number(value.choice) * DAY_MS).toISOString();
}

/** The API's answer about `expiresAt`, in words a person can act on. */
export const EXPIRY_RANGE_MESSAGE =
  'hubgate needs an expiry at least 1 minute and at most 366 days from now. Choose another.';

/** The day a key stops working, picked on a calendar: from today to a year ahead. */
function KeyExpiryDate({
  value,
  onInput,
  error,
  now,
}: {
  value: string;
  onInput: (value: string) => void;
  error: string | undefined;
  now: Date;
}) {
  return (
    <Field
      label="Expiry date"
      hint="The key stops working at the end of that day (23:59, your time)."
      error={error}
    >
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          type="date"
          required
          min={isoDay(now)}
          max={isoDay(new Date(now.getTime() + MAX_CUSTOM_DAYS * DAY_MS))}
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** When a key stops working: a number of days from now, or a day picked on a calendar. */
export function KeyExpiryPicker({
  value,
  onChange,
  error,
  currentExpiry,
}: {
  value: ExpiryValue;
  onChange: (value: ExpiryValue) => void;
  error?: string;
  /** Offers "keep the current expiry" (rotation), naming it. */
  currentExpiry?: string;
}) {
  const now = new Date();
  const dateError = value.choice === 'date' ? error : undefined;
  return (
    <div class="key-expiry-picker">
      <Field
        label={currentExpiry ? 'New expiry' : 'Expires'}
        hint="After this the key stops working. Set the shortest that suits its job; a key lasts a year at most."
        error={value.choice === 'date' ? undefined : error}
      >
        {({ id, describedBy, invalid }) => (
          <select
            id={id}
            value={value.choice}
            aria-describedby={describedBy}
            aria-invalid={invalid}
            onChange={(event) => onChange({ ...value, choice: event.currentTarget.value })}
          >
            {currentExpiry ? (
              <option value="keep">Keep the current expiry ({day.format(new Date(currentExpiry))})</option>
            ) : null}
            {EXPIRY_DAYS.map((days) => (
              <option key={days} value={String(days)}>
                In {days} days ({day.format(new Date(now.getTime() + days * DAY_MS))})
              </option>
            ))}
            <option value="date">On a day I choose…</option>
          </select>
        )}
      </Field>
      {value.choice === 'date' ? (
        <KeyExpiryDate
          value={value.date}
          onInput={(date) => onChange({ ...value, date })}
          error={dateError}
          now={now}
        />
      ) : null}
    </div>
  );
}

/** How a key's secret is used: said under it, where the key is shown once. */
export function KeyUsage({ secret }: { secret: string }) {
  return (
    <p class="key-usage">
      Your automation sends it in every request as <code>Authorization: Bearer {secret.slice(0, 4)}…</code>
    </p>
  );
}

/** The most a key's own limit may be (contract §24): requests per minute. */
export const RATE_LIMIT_MAX = 100_000;

/** What is wrong with a typed rate limit, in words; undefined when it is fine (empty is the default). */
export function rateLimitProblem(value: string): string | undefined {
  const text = value.trim();
  if (!text) return undefined;
  const n = Number(text);
  return /^\d+$/.test(text) && n >= 1 && n <= RATE_LIMIT_MAX
    ? undefined
    : `Enter a whole number from 1 to ${RATE_LIMIT_MAX.toLocaleString('en-US')}, or leave it empty for the default.`;
}

/** The `rateLimitPerMinute` to send: null (the hub's default) when empty. */
export const rateLimitOf = (value: string): number | null => (value.trim() ? Number(value.trim()) : null);

/** A key's rate limit in words, for the list and the dialogs: "Rate limit: 600 requests per minute". */
export const rateLimitWords = (limit: number | null | undefined): string =>
  `Rate limit: ${limit ? `${limit.toLocaleString('en-US')} requests per minute` : 'the default'}`;

/** A key's own rate limit: requests per minute, empty for the hub's default. */
export function KeyRateLimitField({
  value,
  onInput,
  error,
}: {
  value: string;
  onInput: (value: string) => void;
  error: string | undefined;
}) {
  return (
    <Field
      label="Requests per minute (optional)"
      hint={`This key's own limit, 1 to ${RATE_LIMIT_MAX.toLocaleString('en-US')}; over it, hubgate answers 429. Empty: the default limit every key has.`}
      error={error}
    >
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          type="text"
          inputMode="numeric"
          autoComplete="off"
          class="input-short"
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}

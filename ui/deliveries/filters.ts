// The event log's words, filters (from and to the URL), the UI's paths of a connection and of a delivery,
// local times for the time fields, and a count said in words: plain functions, apart from log.ts's hook so
// that unit tests load them without a DOM.
import { withQuery } from '../common/api.js';
import { pageUrl } from '../common/paths.js';
import type { DeliveryStatus } from '../common/routes.js';

// Times as `<input type="datetime-local">` takes them (local wall-clock time, to the minute) and as
// the API takes them (RFC 3339 UTC).

const pad = (n: number): string => String(n).padStart(2, '0');

/** `2026-11-27T14:05` in the browser's time zone, for a datetime-local input. */
export function toLocalInput(iso: string | number | Date): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A datetime-local value as RFC 3339 UTC; '' for an empty or unreadable one. */
export function fromLocalInput(value: string): string {
  if (!value) return '';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

/** The browser's time zone by name ("Europe/Paris", "UTC"), said beside the time fields. */
export const timeZoneName = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';

export const HOUR_MS = 3600 * 1000;
export const DAY_MS = 24 * HOUR_MS;

// Words and sizes shared by the parts of a connection's event log.

/** Each delivery status (docs/api/events.md), as the log and its filter say it. */
export const DELIVERY_STATUS_WORDS: Record<DeliveryStatus, string> = {
  pending: 'Pending',
  delivering: 'Delivering',
  retrying: 'Retrying',
  delivered: 'Delivered',
  failed: 'Failed',
  cancelled: 'Cancelled',
  skipped: 'Skipped',
};

/** The number of columns of the log's table, which the attempts row spans. */
export const DELIVERY_COLUMNS = 7;

/** Every delivery status, in the order the log's filter offers them. */
export const DELIVERY_STATUSES = Object.keys(DELIVERY_STATUS_WORDS) as DeliveryStatus[];

// The event log's filters (docs/api/events.md), as the page's URL holds them: the same names and values as
// the API's query, so a bookmark, a reload and the back button all show the same deliveries.

export interface LogFilters {
  /** None: every status. */
  status: DeliveryStatus[];
  /** One pattern with `*`, as a connection's `eventTypes`. */
  eventType: string;
  eventId: string;
  /** RFC 3339, by created time. */
  since: string;
  until: string;
  test: '' | 'true' | 'false';
  /** `2xx`, `4xx`, `5xx` or a three-digit code, matched on the last attempt. */
  responseStatus: string;
}

export const NO_FILTERS: LogFilters = {
  status: [],
  eventType: '',
  eventId: '',
  since: '',
  until: '',
  test: '',
  responseStatus: '',
};

export const RESPONSE_CLASSES = ['2xx', '4xx', '5xx'] as const;
const RESPONSE_STATUS = /^([245]xx|[1-5]\d\d)$/;
/** As the API takes them: a pattern of a connection's `eventTypes`, an event's ID. */
const EVENT_TYPE = /^[a-z0-9_.*-]{1,100}$/;
const EVENT_ID = /^evt_[0-9A-Za-z]{22}$/;

export type FilterProblems = Partial<Record<'eventType' | 'eventId' | 'responseStatus' | 'until', string>>;

/** What the API would refuse in these filters, said on the field to correct. */
export function filterProblems(filters: LogFilters): FilterProblems {
  const problems: FilterProblems = {};
  if (filters.eventType && !EVENT_TYPE.test(filters.eventType)) {
    problems.eventType = 'Use lowercase letters, digits, “.”, “_”, “-” and “*”, as in employee.*';
  }
  if (filters.eventId && !EVENT_ID.test(filters.eventId)) {
    problems.eventId = 'An event ID is evt_ followed by 22 letters and digits.';
  }
  if (filters.responseStatus && !RESPONSE_STATUS.test(filters.responseStatus)) {
    problems.responseStatus = 'Enter a three-digit status code, such as 404.';
  }
  if (filters.since && filters.until && Date.parse(filters.until) <= Date.parse(filters.since)) {
    problems.until = 'Choose a time after “Created from”.';
  }
  return problems;
}

const isStatus = (value: string): value is DeliveryStatus =>
  DELIVERY_STATUSES.includes(value as DeliveryStatus);

const isTime = (value: string | undefined): value is string =>
  Boolean(value && !Number.isNaN(Date.parse(value)));

/** The filters of a page's query string; a value the API would refuse is left out, not sent. */
export function filtersFrom(query: Record<string, string | undefined>): LogFilters {
  const filters = readFilters(query);
  const problems = filterProblems(filters);
  for (const name of Object.keys(problems) as (keyof FilterProblems)[]) filters[name] = '';
  return filters;
}

function readFilters(query: Record<string, string | undefined>): LogFilters {
  const status = (query.status ?? '').split(',').filter(isStatus);
  const test = query.test === 'true' || query.test === 'false' ? query.test : '';
  return {
    // In the order the filter offers them, each once.
    status: DELIVERY_STATUSES.filter((s) => status.includes(s)),
    eventType: (query.eventType ?? '').trim(),
    eventId: (query.eventId ?? '').trim(),
    since: isTime(query.since) ? new Date(query.since).toISOString() : '',
    until: isTime(query.until) ? new Date(query.until).toISOString() : '',
    test,
    responseStatus: (query.responseStatus ?? '').trim(),
  };
}

/** The query of the filters, for the page's URL and for the API alike (empty ones left out). */
export function filterQuery(filters: LogFilters): Record<string, string> {
  const query: Record<string, string> = {};
  if (filters.status.length > 0) query.status = filters.status.join(',');
  for (const name of ['eventType', 'eventId', 'since', 'until', 'test', 'responseStatus'] as const) {
    if (filters[name]) query[name] = filters[name];
  }
  return query;
}

/** A stable text of the filters: what the log's request and its cursor depend on. */
export const filterKey = (filters: LogFilters): string =>
  new URLSearchParams(filterQuery(filters)).toString();

export const hasFilters = (filters: LogFilters): boolean => filterKey(filters) !== '';

// Where a connection lives in the UI: its page and its deliveries' pages.

/** The connection's page (its event log), with the log's filters and page if any. */
export const connectionPage = (id: string, filters?: LogFilters, cursor?: string | null): string =>
  withQuery(pageUrl(`/connections/${encodeURIComponent(id)}/events`), {
    ...(filters ? filterQuery(filters) : {}),
    cursor,
  });

/** One delivery's page; it carries the log's filters, so that "back" returns to the same list. */
export const deliveryPage = (id: string, deliveryId: string, back: Record<string, string> = {}): string =>
  withQuery(pageUrl(`/connections/${encodeURIComponent(id)}/events/${encodeURIComponent(deliveryId)}`), back);

export interface DeliveryCount {
  /** Deliveries counted. */
  count: number;
  /** True when there are more than `count` (the count stopped at its bound). */
  more: boolean;
}

/** "12 deliveries", "more than 1,000 deliveries": a count said honestly. */
export function countText({ count, more }: DeliveryCount, one = 'delivery', many = 'deliveries'): string {
  const n = count.toLocaleString();
  if (more) return `more than ${n} ${many}`;
  return `${n} ${count === 1 ? one : many}`;
}

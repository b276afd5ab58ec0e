// The event log's filters (contract §15), as the page's URL holds them: the same names and values as
// the API's query, so a bookmark, a reload and the back button all show the same deliveries.
import type { DeliveryStatus } from '../api-types.js';
import { DELIVERY_STATUSES } from '../components/deliveryLog.js';

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
export const RESPONSE_STATUS = /^([245]xx|[1-5]\d\d)$/;
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

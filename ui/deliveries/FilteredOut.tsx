// What a connection's payload filter dropped (docs/api/events.md, Filtered events): such an event gets no
// delivery, so the log below never shows it. This section says how many, since when, and lists the
// most recent ones.
import { useId } from 'preact/hooks';
import { api } from '../common/api.js';
import { Time } from '../common/format.js';
import { useResource, type Resource } from '../common/hooks.js';
import { ErrorNotice } from '../common/Notice.js';
import { routes, type Connection, type FilteredEvents } from '../common/routes.js';
import { reaches } from '../common/viewer.js';

/** The most the API keeps per connection: the whole list in one page. */
const KEPT = 100;

/**
 * The events connection `id`'s filter dropped, loaded with the page and again on each reload; null
 * where the viewer's credential does not reach them (the portal page: docs/api/portal.md).
 */
export const useFilteredEvents = (id: string) =>
  useResource(
    (signal): Promise<FilteredEvents | null> =>
      reaches(routes.deliveries.filtered)
        ? api(routes.deliveries.filtered, { params: { id }, query: { limit: KEPT }, signal })
        : Promise.resolve(null),
    `filtered ${id}`,
  );

const events = (n: number) => `${n.toLocaleString()} ${n === 1 ? 'event was' : 'events were'}`;

/** "12 events were not delivered because …: the first on …, the last 3 minutes ago." */
function Summary({ answer }: { answer: FilteredEvents }) {
  if (answer.total === 0 || !answer.since || !answer.lastAt) {
    return <p>No event has been filtered out yet: every event of its types was delivered to it.</p>;
  }
  if (answer.total === 1) {
    return (
      <p>
        1 event was not delivered because the payload filter did not match it, on{' '}
        <Time at={answer.since} mode="absolute" />. It got no delivery, so the log below does not show it.
      </p>
    );
  }
  return (
    <p>
      {events(answer.total)} not delivered because the payload filter did not match them: the first on{' '}
      <Time at={answer.since} mode="absolute" />, the last <Time at={answer.lastAt} />. They got no delivery,
      so the log below does not show them.
    </p>
  );
}

function FilteredTable({ answer }: { answer: FilteredEvents }) {
  const shown = answer.data.length;
  return (
    <details class="filter-panel">
      <summary>
        {shown === answer.total ? 'Show them' : `Show the ${shown.toLocaleString()} most recent`}
      </summary>
      <div class="table-wrap">
        <table class="cards-on-phone">
          <caption class="visually-hidden">Events filtered out, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Event type</th>
              <th scope="col">Event ID</th>
              <th scope="col">Published</th>
            </tr>
          </thead>
          <tbody>
            {answer.data.map((event) => (
              <tr key={event.eventId}>
                <th scope="row" class="mono">
                  {event.eventType}
                </th>
                <td class="mono" data-label="Event ID">
                  {event.eventId}
                </td>
                <td class="delivery-time" data-label="Published">
                  <Time at={event.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

/**
 * "Filtered out": shown while the connection has a payload filter, or once its filter dropped
 * something (a filter since removed still explains what went missing).
 */
export function FilteredOut({
  connection,
  filtered,
}: {
  connection: Connection;
  filtered: Resource<FilteredEvents | null>;
}) {
  const titleId = useId();
  const answer = filtered.data;
  if (answer === null) return null;
  const hasFilter = Boolean(connection.config.filter);
  if (!answer) {
    return hasFilter ? (
      <ErrorNotice error={filtered.error} title="The events filtered out could not be loaded." />
    ) : null;
  }
  if (!hasFilter && answer.total === 0) return null;
  return (
    <section class="card stack" aria-labelledby={titleId}>
      <h2 id={titleId}>Filtered out</h2>
      <Summary answer={answer} />
      {answer.data.length > 0 ? <FilteredTable answer={answer} /> : null}
    </section>
  );
}

/** The column headings of the event log's table. */
export function DeliveryTableHead() {
  return (
    <thead>
      <tr>
        <th scope="col" class="disclosure-cell">
          <span class="visually-hidden">Attempts</span>
        </th>
        <th scope="col">Event</th>
        <th scope="col">Status</th>
        <th scope="col" class="num">
          Attempts
        </th>
        <th scope="col">Created</th>
        <th scope="col">Last / next attempt</th>
        <th scope="col" class="actions">
          <span class="visually-hidden">Actions</span>
        </th>
      </tr>
    </thead>
  );
}

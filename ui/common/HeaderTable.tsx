// Headers as a table, and a body as a person reads it: the delivery page's attempts and a source's
// request log show what was sent and received the same way.

/** Headers of a request or response, name and value, as sent or received (`[redacted]` dimmed). */
export function HeaderTable({ headers, caption }: { headers: Record<string, string>; caption: string }) {
  const entries = Object.entries(headers);
  if (entries.length === 0) return <p class="muted">No headers.</p>;
  return (
    <div class="table-wrap headers-wrap">
      <table class="headers">
        <caption class="visually-hidden">{caption}</caption>
        <tbody>
          {entries.map(([name, value]) => (
            <tr key={name}>
              <th scope="row" class="mono">
                {name}
              </th>
              <td class={value === '[redacted]' ? 'mono muted' : 'mono'}>{value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A body as a person reads it: JSON formatted when it is whole JSON, else as it came. */
export function readable(body: string, truncated: boolean): string {
  if (truncated) return body;
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

/** Headers of a request or response, name and value, as sent or received. */
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

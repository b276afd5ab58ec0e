/** The recommended handling of keys (the spec's list), kept in sight. */
export function KeyHandling() {
  return (
    <section class="card" aria-labelledby="key-handling-title">
      <h2 id="key-handling-title">Handling keys safely</h2>
      <ul class="key-handling">
        <li>
          <strong>Least privilege.</strong> Give each key only the scopes its job needs, and one key to each
          system, so a leak reaches as little as possible.
        </li>
        <li>
          <strong>Expiry.</strong> Every key expires; choose the shortest lifetime that suits its job.
        </li>
        <li>
          <strong>Rotate regularly.</strong> Keep the old secret working for an hour to switch without an
          outage, or stop it at once if it may have leaked.
        </li>
        <li>
          <strong>Revoke</strong> keys that leaked or are no longer used.
        </li>
        <li>
          <strong>Store the secret in a secret manager.</strong> hubgate shows it once and keeps only a hash;
          never put it in code, tickets or chat.
        </li>
      </ul>
    </section>
  );
}

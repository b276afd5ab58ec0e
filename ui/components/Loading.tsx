/** Shown while a page's data is on its way. */
export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="loading" role="status">
      <span class="spinner" aria-hidden="true" />
      {what}…
    </p>
  );
}

/** Loads a page's data again; says so while it does. */
export function RefreshButton({ loading, onRefresh }: { loading: boolean; onRefresh: () => void }) {
  return (
    <button type="button" class="button" onClick={onRefresh} disabled={loading} aria-busy={loading}>
      {loading ? 'Refreshing…' : 'Refresh'}
    </button>
  );
}

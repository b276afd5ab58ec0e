// Older and newer pages of a list (docs/api/conventions.md's cursors), kept in the URL.
/**
 * Paging through a newest-first list by cursor. The cursor is in the page's URL, so a reload or the
 * back button lands on the same page; "First page" drops it.
 */
export function Pager({
  cursor,
  nextCursor,
  hrefFor,
  label,
}: {
  cursor: string | null;
  nextCursor: string | null;
  hrefFor: (cursor: string | null) => string;
  label: string;
}) {
  if (!cursor && !nextCursor) return null;
  return (
    <nav class="pager" aria-label={label}>
      {cursor ? (
        <a class="button" href={hrefFor(null)}>
          First page
        </a>
      ) : (
        <span />
      )}
      {nextCursor ? (
        <a class="button" href={hrefFor(nextCursor)}>
          Older entries →
        </a>
      ) : null}
    </nav>
  );
}

/** A rule's heading and the buttons that move it up or down the list, or remove it. */
export function RuleCardHead({
  id,
  title,
  index,
  count,
  onMove,
  onRemove,
}: {
  id: string;
  title: string;
  index: number;
  count: number;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
}) {
  return (
    <div class="rule-head">
      <h3 id={`${id}-title`}>{title}</h3>
      <div class="row">
        <button type="button" class="button button-small" disabled={index === 0} onClick={() => onMove(-1)}>
          Move up<span class="visually-hidden"> {title}</span>
        </button>
        <button
          type="button"
          class="button button-small"
          disabled={index === count - 1}
          onClick={() => onMove(1)}
        >
          Move down<span class="visually-hidden"> {title}</span>
        </button>
        <button type="button" class="button button-small button-danger-quiet" onClick={onRemove}>
          Remove<span class="visually-hidden"> {title}</span>
        </button>
      </div>
    </div>
  );
}

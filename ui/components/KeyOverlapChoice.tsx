/** How long the old secret keeps working after a rotation (`previousSecretValidForSeconds`). */
export const OVERLAPS = [
  {
    seconds: 0,
    span: '',
    label: 'Stop the old secret now',
    help: 'Choose this if the secret may have leaked. Whatever still uses it is refused at once.',
  },
  {
    seconds: 3600,
    span: '1 hour',
    label: 'Keep the old secret working for 1 hour',
    help: 'Time to put the new secret in place without an outage.',
  },
  {
    seconds: 86_400,
    span: '24 hours',
    label: 'Keep the old secret working for 24 hours',
    help: 'For systems that take longer to update.',
  },
] as const;

/** When the old secret of a rotated key stops working; `id` prefixes the ids of its controls. */
export function KeyOverlapChoice({
  id,
  overlap,
  onChange,
}: {
  id: string;
  overlap: number;
  onChange: (seconds: number) => void;
}) {
  return (
    <fieldset>
      <legend>When the old secret stops working</legend>
      {OVERLAPS.map((option) => (
        <div class="check key-choice" key={option.seconds}>
          <input
            id={`${id}-${option.seconds}`}
            type="radio"
            name="overlap"
            value={String(option.seconds)}
            checked={overlap === option.seconds}
            aria-describedby={`${id}-${option.seconds}-help`}
            onChange={() => onChange(option.seconds)}
          />
          <div>
            <label for={`${id}-${option.seconds}`}>{option.label}</label>
            <p class="key-level-help" id={`${id}-${option.seconds}-help`}>
              {option.help}
            </p>
          </div>
        </div>
      ))}
    </fieldset>
  );
}

/** A catalog field with options, as a `<select>` of them; `common` wires it to its label. */
export function ConnectionFieldSelect({
  common,
  options,
  value,
  onInput,
}: {
  common: {
    id: string;
    name: string;
    'aria-describedby': string | undefined;
    'aria-invalid': true | undefined;
  };
  options: string[];
  value: string;
  onInput: (value: string) => void;
}) {
  return (
    <select {...common} value={value} onChange={(event) => onInput(event.currentTarget.value)}>
      {options.map((option) => (
        <option key={option} value={option}>
          {option}
        </option>
      ))}
    </select>
  );
}

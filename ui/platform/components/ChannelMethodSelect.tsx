const METHODS = ['POST', 'PUT', 'PATCH'] as const;

/** The attributes that tie a channel field's control to its label, hint and error. */
export interface ChannelControlWiring {
  id: string;
  name: string;
  'aria-describedby': string | undefined;
  'aria-invalid': true | undefined;
  disabled: boolean | undefined;
}

/** The HTTP method of an HTTP-request channel. */
export function ChannelMethodSelect({
  common,
  value,
  onValue,
}: {
  common: ChannelControlWiring;
  value: string;
  onValue: (value: string) => void;
}) {
  return (
    <select {...common} value={value} onChange={(event) => onValue(event.currentTarget.value)}>
      {METHODS.map((method) => (
        <option key={method} value={method}>
          {method}
        </option>
      ))}
    </select>
  );
}

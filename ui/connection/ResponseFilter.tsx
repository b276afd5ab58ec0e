import { useEffect, useState } from 'preact/hooks';
import { RESPONSE_CLASSES } from './logFilters.js';

const CLASS_WORDS: Record<(typeof RESPONSE_CLASSES)[number], string> = {
  '2xx': '2xx success',
  '4xx': '4xx refused by the receiver',
  '5xx': '5xx receiver error',
};

const isClass = (value: string): boolean => (RESPONSE_CLASSES as readonly string[]).includes(value);

/** An exact status code, typed after choosing "Exact code…". */
function ResponseCode({
  id,
  value,
  onValue,
  error,
}: {
  id: string;
  value: string;
  onValue: (value: string) => void;
  error: string | null;
}) {
  return (
    <input
      type="text"
      inputMode="numeric"
      class="mono code-input"
      aria-label="Response status code"
      aria-invalid={error ? true : undefined}
      aria-describedby={error ? `${id}-error` : undefined}
      pattern="[1-5][0-9][0-9]"
      maxLength={3}
      placeholder="404"
      value={isClass(value) ? '' : value}
      onInput={(event) => onValue(event.currentTarget.value.trim())}
    />
  );
}

/**
 * The last attempt's response status: a class from the list, or one exact code typed after choosing
 * "Exact code…". `value` is what the filter holds (`5xx`, `404`, '').
 */
export function ResponseFilter({
  id,
  value,
  onValue,
  onChoose,
  error,
}: {
  id: string;
  /** Why the code typed cannot be applied. */
  error: string | null;
  value: string;
  /** A code typed: applied with the form. */
  onValue: (value: string) => void;
  /** A choice from the list: applied at once. */
  onChoose: (value: string) => void;
}) {
  const [exact, setExact] = useState(value !== '' && !isClass(value));
  useEffect(() => {
    if (value !== '') setExact(!isClass(value));
  }, [value]);
  return (
    <div class="field filter-response">
      <label for={id}>Response</label>
      <div class="filter-response-row">
        <select
          id={id}
          value={exact ? 'code' : value}
          onChange={(event) => {
            const chosen = event.currentTarget.value;
            setExact(chosen === 'code');
            if (chosen !== 'code') onChoose(chosen);
          }}
        >
          <option value="">Any response</option>
          {RESPONSE_CLASSES.map((c) => (
            <option key={c} value={c}>
              {CLASS_WORDS[c]}
            </option>
          ))}
          <option value="code">Exact code…</option>
        </select>
        {exact ? <ResponseCode id={id} value={value} onValue={onValue} error={error} /> : null}
      </div>
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

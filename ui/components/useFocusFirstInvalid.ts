import { useEffect, useRef } from 'preact/hooks';

/** Moves focus to the first control that says it is wrong, after a refused submit. */
export function useFocusFirstInvalid(attempt: number) {
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (attempt === 0) return;
    form.current
      ?.querySelector<HTMLElement>('[aria-invalid="true"], .field-invalid input:not(:disabled)')
      ?.focus();
  }, [attempt]);
  return form;
}

import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

/**
 * A labelled form control with its hint and its error, wired for screen readers: the control is
 * described by both and marked invalid while the error shows. `children` renders the control
 * from the ids it is given.
 */
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: ComponentChildren;
  hint?: ComponentChildren;
  error?: string;
  children: (ids: { id: string; describedBy: string | undefined; invalid: boolean }) => ComponentChildren;
}) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div class={error ? 'field field-invalid' : 'field'}>
      <label for={id}>{label}</label>
      {children({ id, describedBy, invalid: Boolean(error) })}
      {hint ? (
        <p class="field-hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

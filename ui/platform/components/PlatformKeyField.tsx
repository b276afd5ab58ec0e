import type { PlatformKeySignIn } from './usePlatformKeySignIn.js';

/** The platform key's field: a password input unless shown, its hint, and what is wrong with it. */
export function PlatformKeyField({ id, state }: { id: string; state: PlatformKeySignIn }) {
  const { fieldError } = state;
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  return (
    <div class={fieldError ? 'field field-invalid' : 'field'}>
      <label for={id}>Platform key</label>
      <input
        id={id}
        ref={state.input}
        // A password field: the key is not shown on screen unless asked. Preact types inputs
        // as a union keyed by `type`; both take the same attributes.
        type={(state.show ? 'text' : 'password') as 'text'}
        name="platform-key"
        autoComplete="off"
        spellcheck={false}
        autoCapitalize="off"
        class="mono"
        value={state.value}
        aria-describedby={fieldError ? `${hintId} ${errorId}` : hintId}
        aria-invalid={fieldError ? true : undefined}
        onInput={(event) => state.setValue(event.currentTarget.value)}
      />
      <p class="field-hint platform-key-hint" id={hintId}>
        Starts with <code>plt_</code>; made with <code>hubgate platform-key create</code>. It is kept in this
        tab only until you sign out or close it.
      </p>
      {fieldError ? (
        <p class="field-error" id={errorId}>
          {fieldError}
        </p>
      ) : null}
    </div>
  );
}

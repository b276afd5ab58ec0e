import { ErrorNotice } from '../../components/Notice.js';
import { PlatformKeyField } from './PlatformKeyField.js';
import type { PlatformKeySignIn } from './usePlatformKeySignIn.js';

/** The platform key, whether to show it, and Open the console. */
export function PlatformKeyForm({ id, state }: { id: string; state: PlatformKeySignIn }) {
  return (
    <form
      class="form"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void state.submit();
      }}
    >
      <PlatformKeyField id={id} state={state} />
      <label class="check">
        <input
          type="checkbox"
          checked={state.show}
          onChange={(event) => state.setShow(event.currentTarget.checked)}
        />
        Show the key
      </label>
      <ErrorNotice error={state.failure} title="The key could not be checked." />
      <button type="submit" class="button button-primary" disabled={state.busy} aria-busy={state.busy}>
        {state.busy ? 'Checking…' : 'Open the console'}
      </button>
    </form>
  );
}

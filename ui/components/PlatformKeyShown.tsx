import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import type { SetupAnswer } from '../api-types.js';
import { Notice } from './Notice.js';
import { SecretOnce } from './SecretOnce.js';

/** The end of setup: the platform key, shown once, and a way on that asks first if it was not copied. */
export function PlatformKeyShown({ answer }: { answer: SetupAnswer }) {
  const { route } = useLocation();
  const [copied, setCopied] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const proceed = () => {
    // The token has done its job: it leaves the address bar and the history entry.
    history.replaceState(null, '', '/setup');
    route('/', true);
  };
  return (
    <div class="stack">
      <Notice tone="success">
        <strong>
          <bdi>{answer.tenant.name}</bdi>
        </strong>{' '}
        is set up, and you are signed in as {answer.user.email}.
      </Notice>
      <p>
        hubgate made a <strong>platform key</strong> for you. Operator tools use it to read monitoring and to
        set up tenants and alerting through the platform API.
      </p>
      <SecretOnce label="Platform key" secret={answer.platformKey.secret} onCopied={() => setCopied(true)} />
      {confirming ? (
        <div
          class="confirm-inline"
          role="alertdialog"
          aria-labelledby="setup-leave"
          aria-describedby="setup-leave-detail"
        >
          <p id="setup-leave">
            <strong>You won’t see this key again.</strong>
          </p>
          <p id="setup-leave-detail">You have not copied it. Continue anyway?</p>
          <div class="row">
            <button type="button" class="button" onClick={() => setConfirming(false)}>
              Go back to the key
            </button>
            <button type="button" class="button button-danger" onClick={proceed}>
              Continue without it
            </button>
          </div>
        </div>
      ) : (
        <button
          type="button"
          class="button button-primary button-block"
          onClick={() => (copied ? proceed() : setConfirming(true))}
        >
          Continue to the overview
        </button>
      )}
    </div>
  );
}

import { useState } from 'preact/hooks';
import type { SetupAnswer } from '../api-types.js';
import { api } from '../api.js';
import { SetupBody } from '../components/SetupBody.js';
import { useSetupToken } from '../components/useSetupToken.js';
import { useResource, useTitle } from '../hooks.js';
import { signedIn } from '../session.js';

/** First-run setup (contract §13): the organization, its first administrator, a platform key. */
export function SetupPage() {
  useTitle('Set up hubgate');
  const token = useSetupToken();
  const [done, setDone] = useState<SetupAnswer | null>(null);
  const status = useResource(
    (signal) => api<{ required: boolean }>('GET', '/api/v1/setup', { signal, anonymous: true }),
    'setup',
  );
  return (
    <section class="card card-narrow" aria-labelledby="setup-title">
      <h1 id="setup-title">{done ? 'Save your platform key' : 'Set up hubgate'}</h1>
      {!done && status.data?.required && token ? (
        <p class="page-description">
          Create your organization and its first administrator. This happens once.
        </p>
      ) : null}
      <SetupBody
        done={done}
        status={status}
        token={token}
        onDone={(answer) => {
          signedIn(answer);
          setDone(answer);
        }}
      />
    </section>
  );
}

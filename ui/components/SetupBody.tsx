import type { SetupAnswer } from '../api-types.js';
import type { Resource } from '../hooks.js';
import { session } from '../session.js';
import { FirstAdminForm } from './FirstAdminForm.js';
import { Loading } from './Loading.js';
import { ErrorNotice, Notice } from './Notice.js';
import { PlatformKeyShown } from './PlatformKeyShown.js';
import { SetupAlreadyDone } from './SetupAlreadyDone.js';

/** What the setup page shows: the key once done, else the form, or why there is none. */
export function SetupBody({
  done,
  status,
  token,
  onDone,
}: {
  done: SetupAnswer | null;
  status: Resource<{ required: boolean }>;
  token: string | null;
  onDone: (answer: SetupAnswer) => void;
}) {
  if (done) return <PlatformKeyShown answer={done} />;
  if (status.loading && !status.data) return <Loading />;
  if (status.error) return <ErrorNotice error={status.error} />;
  if (!status.data?.required) return <SetupAlreadyDone signedInAs={session.value} />;
  if (!token) {
    return (
      <Notice tone="warning">
        This page needs the link that <code>hubgate serve</code> printed when it started: it ends in{' '}
        <code>/setup#token=…</code>. Restart hubgate to print a new one.
      </Notice>
    );
  }
  return <FirstAdminForm token={token} onDone={onDone} />;
}

import type { SessionAnswer } from '../api-types.js';

/** hubgate is set up already: on to the overview, or to sign in. */
export function SetupAlreadyDone({ signedInAs }: { signedInAs: SessionAnswer | null | undefined }) {
  if (signedInAs) {
    return (
      <>
        <p>hubgate is already set up, and you are signed in as {signedInAs.user.email}.</p>
        <a class="button button-primary" href="/">
          Go to the overview
        </a>
      </>
    );
  }
  return (
    <>
      <p>hubgate is already set up.</p>
      <a class="button button-primary" href="/sign-in">
        Sign in
      </a>
    </>
  );
}

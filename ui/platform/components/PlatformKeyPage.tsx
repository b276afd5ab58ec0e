import { useEffect, useId } from 'preact/hooks';
import { Notice } from '../../components/Notice.js';
import { useTitle } from '../../hooks.js';
import { keyProblem } from '../key.js';
import { PlatformKeyForm } from './PlatformKeyForm.js';
import { PlatformBrand } from './PlatformLayout.js';
import { usePlatformKeySignIn } from './usePlatformKeySignIn.js';

/**
 * The console's way in: a platform key pasted once, checked for its shape, then tried against the
 * monitoring route before it is kept (in this tab's sessionStorage only).
 */
export function PlatformKeyPage({ signedOut }: { signedOut: boolean }) {
  useTitle('Operator console');
  const state = usePlatformKeySignIn();
  const id = useId();
  const problem = keyProblem.value;

  useEffect(() => {
    if (!document.activeElement || document.activeElement === document.body)
      document.getElementById('main')?.focus({ preventScroll: true });
  }, []);

  return (
    <main id="main" class="bare" tabIndex={-1}>
      <div class="bare-brand">
        <PlatformBrand />
      </div>
      <section class="card card-narrow" aria-labelledby={`${id}-title`}>
        <h1 id={`${id}-title`}>Operator console</h1>
        <p class="page-description">
          Monitoring, tenants and alerting for the people who run this hubgate. Sign in with a platform key.
        </p>
        {signedOut && !problem ? (
          <Notice tone="success">You have signed out. This tab no longer holds the platform key.</Notice>
        ) : null}
        {problem ? (
          <div class="notice notice-warning" role="alert">
            {problem}
          </div>
        ) : null}
        <PlatformKeyForm id={id} state={state} />
      </section>
    </main>
  );
}

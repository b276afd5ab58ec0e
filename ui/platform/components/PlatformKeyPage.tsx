import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../../api.js';
import { ErrorNotice, Notice } from '../../components/Notice.js';
import { useTitle } from '../../hooks.js';
import { keyProblem, looksLikePlatformKey, rememberKey } from '../key.js';
import { PlatformBrand } from './PlatformLayout.js';

const REFUSED =
  'hubgate refused that platform key: it was revoked, has expired, or was mistyped. Paste a valid key.';

/** Why a pasted value cannot be a platform key, in words; undefined when it could be one. */
function shapeProblem(value: string): string | undefined {
  if (!value) return 'Paste the platform key.';
  if (/^tnt_/.test(value))
    return 'That is a tenant API key (tnt_…). The console needs a platform key, which starts with plt_.';
  if (!value.startsWith('plt_'))
    return 'A platform key starts with plt_. Paste the whole key as "hubgate platform-key create" printed it.';
  if (/\s/.test(value)) return 'The key contains spaces or line breaks. Paste it again without them.';
  if (!looksLikePlatformKey(value))
    return 'That is not a whole platform key: after plt_ it has 38 letters and digits. Paste it again.';
  return undefined;
}

/**
 * The console's way in: a platform key pasted once, checked for its shape, then tried against the
 * monitoring route before it is kept (in this tab's sessionStorage only).
 */
export function PlatformKeyPage({ signedOut }: { signedOut: boolean }) {
  useTitle('Operator console');
  const [value, setValue] = useState('');
  const [show, setShow] = useState(false);
  const [fieldError, setFieldError] = useState<string | undefined>(undefined);
  const [failure, setFailure] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const id = useId();
  const problem = keyProblem.value;

  useEffect(() => {
    if (!document.activeElement || document.activeElement === document.body)
      document.getElementById('main')?.focus({ preventScroll: true });
  }, []);

  const submit = async () => {
    const key = value.trim();
    const wrong = shapeProblem(key);
    setFailure(undefined);
    setFieldError(wrong);
    if (wrong) {
      input.current?.focus();
      return;
    }
    setBusy(true);
    try {
      await api('GET', '/api/v1/platform/monitoring', { bearer: key });
      setValue('');
      rememberKey(key);
    } catch (error) {
      const refused =
        error instanceof ApiError && (error.status === 401 || error.code === 'route_not_allowed');
      if (refused) {
        setFieldError(REFUSED);
        input.current?.focus();
      } else {
        setFailure(error instanceof ApiError ? error : new ApiError(0, 'unknown', String(error)));
      }
    } finally {
      setBusy(false);
    }
  };

  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
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
        <form
          class="form"
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            void submit();
          }}
        >
          <div class={fieldError ? 'field field-invalid' : 'field'}>
            <label for={id}>Platform key</label>
            <input
              id={id}
              ref={input}
              // A password field: the key is not shown on screen unless asked. Preact types inputs
              // as a union keyed by `type`; both take the same attributes.
              type={(show ? 'text' : 'password') as 'text'}
              name="platform-key"
              autoComplete="off"
              spellcheck={false}
              autoCapitalize="off"
              class="mono"
              value={value}
              aria-describedby={fieldError ? `${hintId} ${errorId}` : hintId}
              aria-invalid={fieldError ? true : undefined}
              onInput={(event) => setValue(event.currentTarget.value)}
            />
            <p class="field-hint platform-key-hint" id={hintId}>
              Starts with <code>plt_</code>; made with <code>hubgate platform-key create</code>. It is kept in
              this tab only until you sign out or close it.
            </p>
            {fieldError ? (
              <p class="field-error" id={errorId}>
                {fieldError}
              </p>
            ) : null}
          </div>
          <label class="check">
            <input
              type="checkbox"
              checked={show}
              onChange={(event) => setShow(event.currentTarget.checked)}
            />
            Show the key
          </label>
          <ErrorNotice error={failure} title="The key could not be checked." />
          <button type="submit" class="button button-primary" disabled={busy} aria-busy={busy}>
            {busy ? 'Checking…' : 'Open the console'}
          </button>
        </form>
      </section>
    </main>
  );
}

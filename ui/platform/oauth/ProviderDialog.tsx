// The providers page's form (docs/api/oauth.md): add an OAuth2 provider, or edit one. The client secret is
// write-only: asked for on add, left empty on edit to keep the stored one.
import { useState } from 'preact/hooks';
import { routeUrl } from '../../common/api.js';
import { Dialog, FormActions } from '../../common/Dialog.js';
import { Field, TextField } from '../../common/Field.js';
import { useAction } from '../../common/hooks.js';
import { ErrorNotice } from '../../common/Notice.js';
import { routes, type OAuthGrant, type OAuthProvider, type OAuthProviderBody } from '../../common/routes.js';
import { platformApi } from '../key.js';

const KEY_PATTERN = /^[a-z][a-z0-9_-]{1,40}$/;

export const GRANT_WORDS: Record<OAuthGrant, string> = {
  authorization_code: 'Authorization code: a person connects in the browser',
  client_credentials: 'Client credentials: hubgate connects on its own',
};

/**
 * Where the provider sends people back after they allow access: PUBLIC_URL/api/v1/oauth/callback. The
 * console is served by hubgate itself, at the address its browser reached it by, which is PUBLIC_URL
 * wherever hubgate works for people (decision 0068).
 */
const callbackUrl = () => new URL(routeUrl(routes.platform.oauthCallback), window.location.origin).href;

/** The callback URL to register at the provider, read-only, with a copy button. */
function CallbackUrl({ grant }: { grant: OAuthGrant }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const url = callbackUrl();
  return (
    <Field
      label="Callback URL"
      hint={
        grant === 'authorization_code'
          ? 'Register this at the provider as the redirect (callback) URL of the client: people come back to hubgate there after allowing access.'
          : 'Not used with client credentials: nobody is sent to the provider.'
      }
    >
      {({ id, describedBy }) => (
        <div class="secret-row">
          <input
            id={id}
            class="secret-value"
            type="text"
            readOnly
            value={url}
            spellcheck={false}
            aria-describedby={describedBy}
            onFocus={(event) => event.currentTarget.select()}
          />
          <button
            type="button"
            class="button"
            aria-label="Copy the callback URL"
            onClick={() =>
              navigator.clipboard.writeText(url).then(
                () => setCopied('yes'),
                () => setCopied('failed'),
              )
            }
          >
            {copied === 'yes' ? 'Copied' : 'Copy'}
          </button>
          <span class="visually-hidden" role="status">
            {copied === 'yes'
              ? 'Copied to the clipboard.'
              : copied === 'failed'
                ? 'Select it and copy it.'
                : ''}
          </span>
        </div>
      )}
    </Field>
  );
}

interface Values {
  key: string;
  name: string;
  authorizationUrl: string;
  tokenUrl: string;
  apiBaseUrl: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
  grant: OAuthGrant;
}

const valuesOf = (p: OAuthProvider | null): Values => ({
  key: p?.key ?? '',
  name: p?.name ?? '',
  authorizationUrl: p?.authorizationUrl ?? '',
  tokenUrl: p?.tokenUrl ?? '',
  apiBaseUrl: p?.apiBaseUrl ?? '',
  clientId: p?.clientId ?? '',
  clientSecret: '',
  scopes: p?.scopes.join(' ') ?? '',
  grant: p?.grant ?? 'authorization_code',
});

/** What is missing before sending, field by field (the API checks the rest, and names the field). */
function localErrors(v: Values, adding: boolean): Partial<Record<keyof Values, string>> {
  const errors: Partial<Record<keyof Values, string>> = {};
  if (adding && !KEY_PATTERN.test(v.key))
    errors.key = 'Use 2 to 41 lower-case letters, digits, - or _, starting with a letter.';
  if (!v.name.trim()) errors.name = 'Enter the provider’s name.';
  if (v.grant === 'authorization_code' && !v.authorizationUrl.trim())
    errors.authorizationUrl = 'Enter the URL people are sent to, to authorize.';
  if (!v.tokenUrl.trim()) errors.tokenUrl = 'Enter the token endpoint’s URL.';
  if (!v.apiBaseUrl.trim()) errors.apiBaseUrl = 'Enter the base URL of the provider’s API.';
  if (!v.clientId.trim()) errors.clientId = 'Enter the client ID.';
  if (adding && !v.clientSecret) errors.clientSecret = 'Enter the client secret.';
  return errors;
}

/** The body: scopes split on spaces or commas, an empty secret left out (kept) on edit. */
function bodyOf(v: Values): OAuthProviderBody {
  const body: OAuthProviderBody = {
    key: v.key.trim(),
    name: v.name.trim(),
    tokenUrl: v.tokenUrl.trim(),
    apiBaseUrl: v.apiBaseUrl.trim(),
    clientId: v.clientId.trim(),
    clientSecret: v.clientSecret,
    scopes: v.scopes.split(/[\s,]+/).filter(Boolean),
    grant: v.grant,
  };
  if (v.authorizationUrl.trim()) body.authorizationUrl = v.authorizationUrl.trim();
  return body;
}

function useProviderForm(provider: OAuthProvider | null, onSaved: (p: OAuthProvider) => void) {
  const [values, setValues] = useState<Values>(() => valuesOf(provider));
  const [checked, setChecked] = useState(false);
  const set = (name: keyof Values) => (value: string) => setValues((v) => ({ ...v, [name]: value }));
  const submit = useAction(async () => {
    const body = bodyOf(values);
    if (!provider) return onSaved(await platformApi(routes.platform.createOAuthProvider, { body }));
    const { key: _key, clientSecret, authorizationUrl, ...rest } = body;
    const patch = {
      ...rest,
      authorizationUrl: authorizationUrl ?? null,
      ...(clientSecret ? { clientSecret } : {}),
    };
    onSaved(
      await platformApi(routes.platform.editOAuthProvider, { params: { key: provider.key }, body: patch }),
    );
  });
  const local = checked ? localErrors(values, !provider) : {};
  const error = (name: keyof Values) => local[name] ?? submit.error?.forField(name);
  const onSubmit = (event: Event & { currentTarget: HTMLFormElement }) => {
    event.preventDefault();
    setChecked(true);
    const form = event.currentTarget;
    if (Object.keys(localErrors(values, !provider)).length > 0) {
      // After the re-render marks them, focus the first field to fix.
      setTimeout(() => form.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
      return;
    }
    void submit.run();
  };
  return { values, set, submit, error, onSubmit };
}

/** Adds a provider (`provider` null) or edits one; the key never changes once saved. */
export function ProviderDialog({
  provider,
  onClose,
  onSaved,
}: {
  provider: OAuthProvider | null;
  onClose: () => void;
  onSaved: (p: OAuthProvider) => void;
}) {
  const form = useProviderForm(provider, onSaved);
  const { values, set, error, submit } = form;
  const other = submit.error && submit.error.fieldErrors.length === 0 ? submit.error : undefined;
  return (
    <Dialog title={provider ? `Edit ${provider.name}` : 'Add an OAuth2 provider'} onClose={onClose} wide>
      <form class="form" noValidate onSubmit={form.onSubmit}>
        {provider ? null : (
          <TextField
            label="Key"
            hint="Names the connector oauth2:<key> in the catalog. It cannot change later."
            type="text"
            autoComplete="off"
            required
            value={values.key}
            onValue={set('key')}
            error={error('key')}
          />
        )}
        <TextField
          label="Name"
          type="text"
          required
          value={values.name}
          onValue={set('name')}
          error={error('name')}
        />
        <Field label="Grant" error={error('grant')}>
          {({ id, describedBy, invalid }) => (
            <select
              id={id}
              value={values.grant}
              aria-describedby={describedBy}
              aria-invalid={invalid || undefined}
              onChange={(event) => set('grant')(event.currentTarget.value)}
            >
              {(Object.keys(GRANT_WORDS) as OAuthGrant[]).map((g) => (
                <option key={g} value={g}>
                  {GRANT_WORDS[g]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <TextField
          label="Authorization URL"
          hint={
            values.grant === 'authorization_code'
              ? 'Where people are sent to sign in and allow access.'
              : 'Not used with client credentials; may stay empty.'
          }
          type="text"
          value={values.authorizationUrl}
          onValue={set('authorizationUrl')}
          error={error('authorizationUrl')}
        />
        <CallbackUrl grant={values.grant} />
        <TextField
          label="Token URL"
          type="text"
          required
          value={values.tokenUrl}
          onValue={set('tokenUrl')}
          error={error('tokenUrl')}
        />
        <TextField
          label="API base URL"
          hint="Calls through a connection go to this URL followed by their path."
          type="text"
          required
          value={values.apiBaseUrl}
          onValue={set('apiBaseUrl')}
          error={error('apiBaseUrl')}
        />
        <TextField
          label="Client ID"
          type="text"
          autoComplete="off"
          required
          value={values.clientId}
          onValue={set('clientId')}
          error={error('clientId')}
        />
        <TextField
          label="Client secret"
          hint={
            provider
              ? 'Stored encrypted and never shown. Leave empty to keep the current one.'
              : 'Stored encrypted and never shown again.'
          }
          type="password"
          autoComplete="new-password"
          required={!provider}
          value={values.clientSecret}
          onValue={set('clientSecret')}
          error={error('clientSecret')}
        />
        <TextField
          label="Scopes"
          hint="Separated by spaces, as the provider names them. Optional."
          type="text"
          autoComplete="off"
          value={values.scopes}
          onValue={set('scopes')}
          error={error('scopes')}
        />
        <ErrorNotice
          error={other}
          title={provider ? 'The changes were not saved.' : 'The provider was not added.'}
        />
        <FormActions
          busy={submit.busy}
          onCancel={onClose}
          label={provider ? 'Save changes' : 'Add provider'}
          busyLabel="Saving…"
        />
      </form>
    </Dialog>
  );
}

// The organization's settings (docs/operators/web-ui.md), for the roles that manage keys: the portal's
// framing and branding (docs/api/portal.md), in a card of its own.
import { useState } from 'preact/hooks';
import { api, type ApiError } from '../common/api.js';
import { Field, TextField } from '../common/Field.js';
import { useAction, useFocusFirstInvalid, useResource } from '../common/hooks.js';
import { PageHeader } from '../common/Layout.js';
import { DoneNotice, ErrorNotice, Loading, RoleNotice, useDoneNotice } from '../common/Notice.js';
import { routes, type PortalSettingsRecord } from '../common/routes.js';
import { canManageKeys, session } from '../common/session.js';

const MAX_ORIGINS = 10;
const LOGO_MAX_LENGTH = 64 * 1024;

/** The API's refusal of a field, in words a person can act on; undefined when the field is fine. */
function fieldWords(error: ApiError | undefined, field: string): string | undefined {
  const found = error?.fieldErrors.find((e) => e.path === field || e.path.startsWith(`${field}.`));
  if (!found) return undefined;
  if (field === 'frameAncestors') {
    const line = /^frameAncestors\.(\d+)$/.exec(found.path)?.[1];
    return line === undefined
      ? `List at most ${MAX_ORIGINS} sites, each once.`
      : `Line ${Number(line) + 1} is not a site address hubgate can allow: write it as https://host or https://host:port, in lower case, with no path.`;
  }
  if (field === 'branding.name') return 'The name is at most 100 characters.';
  if (field === 'branding.logoUrl')
    return 'The logo must be an https address, or a PNG, JPEG or SVG image of at most 64 KiB.';
  return 'Write the colour as # and six hexadecimal digits, such as #0a7cff.';
}

const orNull = (text: string): string | null => (text.trim() === '' ? null : text.trim());

/** Which sites may frame the portal, and what it shows of the organization: read, edited, saved whole. */
function PortalCard({ settings, onSaved }: { settings: PortalSettingsRecord; onSaved: () => void }) {
  const [origins, setOrigins] = useState(settings.frameAncestors.join('\n'));
  const [name, setName] = useState(settings.branding.name ?? '');
  const [logoUrl, setLogoUrl] = useState(settings.branding.logoUrl ?? '');
  const [accentColor, setAccentColor] = useState(settings.branding.accentColor ?? '');
  const [attempt, setAttempt] = useState(0);
  const form = useFocusFirstInvalid(attempt);
  const { done, setDone, ref, dismiss } = useDoneNotice();
  const save = useAction(async () => {
    setDone(null);
    const body: PortalSettingsRecord = {
      frameAncestors: origins
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean),
      branding: { name: orNull(name), logoUrl: orNull(logoUrl), accentColor: orNull(accentColor) },
    };
    const saved = await api(routes.portalSettings.replace, { body });
    // What was saved, as it was saved: blank lines and spaces gone.
    setOrigins(saved.frameAncestors.join('\n'));
    setDone('Portal settings saved. They apply from the next time the portal page loads.');
    onSaved();
  });
  const submit = async () => {
    await save.run();
    setAttempt((n) => n + 1);
  };
  const fieldError = save.error?.fieldErrors.length ? save.error : undefined;
  return (
    <section class="card" aria-labelledby="portal-title">
      <h2 id="portal-title">Portal</h2>
      <p class="muted">
        The portal shows your customers their connections inside your own product. Only the sites listed here
        may show it in a frame.
      </p>
      <DoneNotice done={done} noticeRef={ref} onDismiss={dismiss} />
      <form
        ref={form}
        class="form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        <Field
          label="Sites that may frame the portal"
          hint={`One address per line, such as https://app.example.com, at most ${MAX_ORIGINS}. Leave it empty so that no site may.`}
          error={fieldWords(fieldError, 'frameAncestors')}
        >
          {({ id, describedBy, invalid }) => (
            <textarea
              id={id}
              rows={4}
              spellcheck={false}
              aria-describedby={describedBy}
              aria-invalid={invalid}
              value={origins}
              onInput={(event) => setOrigins(event.currentTarget.value)}
            />
          )}
        </Field>
        <TextField
          label="Name shown in the portal"
          hint="Leave it empty to show none."
          type="text"
          value={name}
          onValue={setName}
          maxLength={100}
          error={fieldWords(fieldError, 'branding.name')}
        />
        <TextField
          label="Logo address"
          hint="An https address, or a data: URL of a PNG, JPEG or SVG image of at most 64 KiB. The browsers of people who open the portal fetch an https logo from its site; a data: URL stays on hubgate."
          type="text"
          value={logoUrl}
          onValue={setLogoUrl}
          maxLength={LOGO_MAX_LENGTH}
          error={fieldWords(fieldError, 'branding.logoUrl')}
        />
        <TextField
          label="Accent colour"
          hint="# and six hexadecimal digits, such as #0a7cff. Leave it empty for hubgate’s own."
          type="text"
          value={accentColor}
          onValue={setAccentColor}
          maxLength={7}
          error={fieldWords(fieldError, 'branding.accentColor')}
        />
        <ErrorNotice
          error={fieldError ? fieldError.saying('Correct the fields marked above.') : save.error}
          title="The portal settings were not saved."
        />
        <div class="row">
          <button type="submit" class="button button-primary" disabled={save.busy} aria-busy={save.busy}>
            {save.busy ? 'Saving…' : 'Save portal settings'}
          </button>
        </div>
      </form>
    </section>
  );
}

/** The organization's settings, for the roles that manage keys; anyone else is told who can. */
export function SettingsPage() {
  const allowed = canManageKeys(session.value);
  const portal = useResource(
    (signal) => (allowed ? api(routes.portalSettings.get, { signal }) : Promise.resolve(null)),
    String(allowed),
  );
  return (
    <>
      <PageHeader title="Settings" description="How your organization’s portal is shown to your customers." />
      {!allowed ? <RoleNotice what="change your organization’s settings" /> : null}
      <ErrorNotice error={portal.error} title="The portal settings could not be loaded." />
      {allowed && !portal.data && !portal.error ? <Loading what="Loading the portal settings" /> : null}
      {portal.data ? <PortalCard settings={portal.data} onSaved={portal.reload} /> : null}
    </>
  );
}

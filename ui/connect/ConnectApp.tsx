// The connect page (contract §20, docs/api/connect-links.md): `/connect/<tenantId>#code=…` for a person
// with no hubgate account. It takes the code out of the address bar, shows the tenant's branding and
// the fields the link left open, and completes the link: "Connected", or, for an OAuth2 connector, the
// provider, whose callback comes back here with `?status=completed` or `?authorizationError=…`.
// Nothing of the tenant UI: no navigation, no session, no sign-in.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../common/api.js';
import { accentProperties, shownLogo } from '../common/branding.js';
import { setTitleOwner, useAction } from '../common/hooks.js';
import { ErrorNotice, Loading, Notice } from '../common/Notice.js';
import { routes, type ConnectCompleted, type ConnectView } from '../common/routes.js';
import { ConnectForm, type Sent } from './ConnectForm.js';
import { callbackReturnOf, codeOf, tenantIdOf, type Shown, type StoredLink } from './link.js';
import { forgetStored, keepStored, readStored } from './stored.js';

export { isConnectPath } from './link.js';

type Stage =
  | { kind: 'loading' }
  | { kind: 'incomplete' }
  | { kind: 'unreadable'; error: ApiError; code: string }
  | { kind: 'used' }
  | { kind: 'form'; code: string; view: ConnectView }
  | { kind: 'leaving'; shown: Shown }
  | { kind: 'connected'; shown: Shown | null }
  | { kind: 'refused'; words: string; stored: StoredLink | null };

const shownOf = (view: ConnectView): Shown => ({
  tenantName: view.tenant.name,
  connectorName: view.connector.name,
  branding: view.branding,
});

/** Where the page starts: a link's code (taken out of the address bar), the callback's return, or neither. */
function startOf(tenantId: string): { stage: Stage; code: string | null } {
  const code = codeOf(window.location.hash);
  if (code) {
    // The code is a credential: it leaves the address bar and this tab's history entry at once.
    window.history.replaceState(null, '', window.location.pathname);
    return { stage: { kind: 'loading' }, code };
  }
  const back = callbackReturnOf(window.location.search);
  if (back?.kind === 'completed') {
    const stored = readStored(tenantId);
    forgetStored(tenantId);
    return { stage: { kind: 'connected', shown: stored }, code: null };
  }
  if (back?.kind === 'failed') {
    return { stage: { kind: 'refused', words: back.words, stored: readStored(tenantId) }, code: null };
  }
  return { stage: { kind: 'incomplete' }, code: null };
}

/** The page's stages, and what moves between them. */
function useConnectLink(tenantId: string) {
  const [stage, setStage] = useState<Stage>({ kind: 'loading' });
  const open = (code: string) => {
    setStage({ kind: 'loading' });
    api(routes.connect.session, { body: { code } })
      .then((view) => setStage({ kind: 'form', code, view }))
      .catch((error: unknown) => {
        const refusal = error instanceof ApiError ? error : new ApiError(0, 'unknown', String(error));
        setStage(refusal.status === 401 ? { kind: 'used' } : { kind: 'unreadable', error: refusal, code });
      });
  };
  const start = () => {
    const { stage: first, code } = startOf(tenantId);
    setStage(first);
    if (code) open(code);
  };
  useEffect(() => {
    start();
    // A link pasted into this tab changes only the fragment: no page load reads it.
    window.addEventListener('hashchange', start);
    return () => window.removeEventListener('hashchange', start);
  }, [tenantId]);

  /** Done: connected, or off to the provider with what the page showed kept for its return. */
  const done = (answer: ConnectCompleted, link: StoredLink) => {
    if ('authorizationUrl' in answer) {
      keepStored(tenantId, link);
      setStage({ kind: 'leaving', shown: link });
      window.location.assign(answer.authorizationUrl);
      return;
    }
    forgetStored(tenantId);
    setStage({ kind: 'connected', shown: link });
  };
  const used = () => {
    forgetStored(tenantId);
    setStage({ kind: 'used' });
  };
  return { stage, open, done, used };
}

/** The link kept for the provider's return: the code, what was sent but secrets, what was shown. */
const linkOf = (view: ConnectView, sent: Sent): StoredLink => ({
  ...shownOf(view),
  code: sent.code,
  ...(sent.displayName ? { displayName: sent.displayName } : {}),
  ...(sent.config ? { config: sent.config } : {}),
});

/** The page around each stage: the tenant's name, logo and accent once known, and one card. */
function ConnectFrame({ shown, children }: { shown: Shown | null; children: ComponentChildren }) {
  const accent = accentProperties(shown?.branding.accentColor ?? null);
  const logo = shownLogo(shown?.branding.logoUrl ?? null);
  const brand = shown ? (shown.branding.name ?? shown.tenantName) : null;
  return (
    <main
      id="main"
      class={accent ? 'bare connect-page branded' : 'bare connect-page'}
      tabIndex={-1}
      style={accent ?? undefined}
    >
      <header class="connect-brand">
        {brand ? (
          <>
            {/* Beside the name it shows, the logo adds nothing for a screen reader. */}
            {logo ? <img class="connect-logo" src={logo} alt="" /> : null}
            <bdi class="connect-brand-name">{brand}</bdi>
          </>
        ) : (
          <>
            <span class="brand-mark" aria-hidden="true">
              h
            </span>
            hubgate
          </>
        )}
      </header>
      <section class="card card-narrow connect-card" aria-labelledby="connect-title">
        {children}
      </section>
    </main>
  );
}

/** The stage's heading, which takes the focus as the stage appears. */
function Heading({ children }: { children: ComponentChildren }) {
  return (
    <h1 id="connect-title" tabIndex={-1} class="focus-target">
      {children}
    </h1>
  );
}

const USED_WORDS = 'This link has been used, has expired or was withdrawn. Ask for a new one.';

function Connected({ shown }: { shown: Shown | null }) {
  return (
    <>
      <Heading>Connected</Heading>
      <Notice tone="success">
        {shown
          ? `${shown.connectorName} is connected to ${shown.branding.name ?? shown.tenantName}.`
          : 'The connection is made.'}{' '}
        You can close this page.
      </Notice>
    </>
  );
}

/**
 * The provider or the callback said no: its words, and Try again with the code kept in this tab,
 * which completes the link again (back to the provider, usually); without it, the link opened again.
 */
function Refused({
  words,
  stored,
  onDone,
  onUsed,
}: {
  words: string;
  stored: StoredLink | null;
  onDone: (answer: ConnectCompleted, link: StoredLink) => void;
  onUsed: () => void;
}) {
  const retry = useAction(async (link: StoredLink) => {
    const { code, displayName, config } = link;
    try {
      onDone(await api(routes.connect.complete, { body: { code, displayName, config } }), link);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return onUsed();
      throw error;
    }
  });
  return (
    <>
      <Heading>Not connected</Heading>
      <div class="notice notice-error" role="alert">
        <strong>The connection was not made.</strong> {words}
      </div>
      <ErrorNotice error={retry.error} title="Trying again failed." />
      {stored ? (
        <button
          type="button"
          class="button button-primary"
          disabled={retry.busy}
          aria-busy={retry.busy}
          onClick={() => void retry.run(stored)}
        >
          {retry.busy ? 'Trying again…' : 'Try again'}
        </button>
      ) : (
        <p>To try again, open the link you were given once more.</p>
      )}
    </>
  );
}

/** What each stage shows in the card. */
function StageBody({ state }: { state: ReturnType<typeof useConnectLink> }) {
  const { stage } = state;
  switch (stage.kind) {
    case 'loading':
      return <Loading what="Opening the link" />;
    case 'incomplete':
      return (
        <>
          <Heading>This link is incomplete</Heading>
          <p>
            This page needs the whole link you were given, which ends in <code>#code=</code> and 32 letters
            and digits. If you opened it and then reloaded this page, open the link again: the page takes the
            code out of the address bar.
          </p>
        </>
      );
    case 'unreadable':
      return (
        <>
          <Heading>The link could not be opened</Heading>
          <ErrorNotice error={stage.error} />
          <button type="button" class="button button-primary" onClick={() => state.open(stage.code)}>
            Try again
          </button>
        </>
      );
    case 'used':
      return (
        <>
          <Heading>This link no longer works</Heading>
          <p>{USED_WORDS}</p>
        </>
      );
    case 'form':
      return (
        <ConnectForm
          code={stage.code}
          view={stage.view}
          onDone={(answer, sent) => state.done(answer, linkOf(stage.view, sent))}
          onUsed={state.used}
        />
      );
    case 'leaving':
      return (
        <>
          <Heading>Taking you to {stage.shown.connectorName}</Heading>
          <Loading what="Opening the sign-in page of the provider" />
        </>
      );
    case 'connected':
      return <Connected shown={stage.shown} />;
    case 'refused':
      return <Refused words={stage.words} stored={stage.stored} onDone={state.done} onUsed={state.used} />;
  }
}

const shownIn = (stage: Stage): Shown | null => {
  if (stage.kind === 'form') return shownOf(stage.view);
  if (stage.kind === 'leaving') return stage.shown;
  if (stage.kind === 'connected') return stage.shown;
  if (stage.kind === 'refused') return stage.stored;
  return null;
};

const TITLES: Record<Stage['kind'], string> = {
  loading: 'Connect',
  incomplete: 'Link incomplete',
  unreadable: 'Link not opened',
  used: 'Link no longer works',
  form: 'Connect',
  leaving: 'Connect',
  connected: 'Connected',
  refused: 'Not connected',
};

/** `/connect/<tenantId>`: rendered by app.tsx without waiting for a session. */
export function ConnectApp() {
  const tenantId = tenantIdOf(window.location.pathname) ?? '';
  const state = useConnectLink(tenantId);
  const { stage } = state;
  const shown = shownIn(stage);
  const owner = shown ? (shown.branding.name ?? shown.tenantName) : 'hubgate';
  // The tab says whose page it is, as the portal's does: the tenant's, once known.
  useEffect(() => {
    setTitleOwner(owner);
    document.title = `${TITLES[stage.kind]} · ${owner}`;
  }, [stage.kind, owner]);
  // Each new stage is announced by its heading taking the focus.
  useEffect(() => {
    if (stage.kind !== 'loading') document.getElementById('connect-title')?.focus();
  }, [stage.kind]);
  return (
    <ConnectFrame shown={shown}>
      <StageBody state={state} />
    </ConnectFrame>
  );
}

import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, withQuery } from '../../api.js';
import type { Page } from '../../api-types.js';
import { Loading } from '../../components/Loading.js';
import { ErrorNotice, Notice } from '../../components/Notice.js';
import { PageHeader } from '../../components/PageHeader.js';
import { useResource } from '../../hooks.js';
import { type Channel, CHANNELS_PATH } from '../components/ChannelKinds.js';
import { RuleCard } from '../components/RuleCard.js';
import { RuleChannelPicker } from '../components/RuleChannelPicker.js';
import { RuleConflict } from '../components/RuleConflict.js';
import { RuleInterval } from '../components/RuleInterval.js';
import {
  bodyOf,
  documentProblems,
  type DocumentDraft,
  draftOf,
  newRule,
  type RoutingDocument,
  RULES_PATH,
  sameDocument,
} from '../components/RuleModel.js';
import { platformApi } from '../key.js';

interface Loaded {
  doc: RoutingDocument;
  channels: Channel[];
}

async function load(signal: AbortSignal): Promise<Loaded> {
  const [doc, channels] = await Promise.all([
    platformApi<RoutingDocument>('GET', RULES_PATH, { signal }),
    platformApi<Page<Channel>>('GET', withQuery(CHANNELS_PATH, { limit: 100 }), { signal }),
  ]);
  return { doc, channels: channels.data };
}

const asApiError = (reason: unknown): ApiError =>
  reason instanceof ApiError ? reason : new ApiError(0, 'unknown', String(reason));

/** The routing document's editor, once loaded: the draft, saving with If-Match, a conflict's choice. */
function RulesEditor({ initial, channels }: { initial: RoutingDocument; channels: Channel[] }) {
  const [saved, setSaved] = useState(initial);
  const [base, setBase] = useState<DocumentDraft>(() => draftOf(initial));
  const [draft, setDraft] = useState<DocumentDraft>(() => draftOf(initial));
  const [checked, setChecked] = useState(false);
  const [serverErrors, setServerErrors] = useState<ApiError | undefined>(undefined);
  const [failure, setFailure] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [news, setNews] = useState<string | null>(null);
  const [conflict, setConflict] = useState<RoutingDocument | null>(null);
  const [attempt, setAttempt] = useState(0);
  const form = useRef<HTMLFormElement>(null);

  const dirty = !sameDocument(base, draft);
  // Leaving (reload, closed tab, another site) with unsaved changes asks first.
  useEffect(() => {
    if (!dirty) return;
    const ask = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', ask);
    return () => window.removeEventListener('beforeunload', ask);
  }, [dirty]);

  useEffect(() => {
    if (attempt === 0) return;
    form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [attempt]);

  const names = new Map(channels.map((c) => [c.id, c.name]));
  const channelName = (id: string) => names.get(id) ?? id;
  const problems = checked ? documentProblems(draft) : new Map<string, string>();
  /** The message for a path: the browser's own check first, then the server's (same paths). */
  const errorAt = (path: string): string | undefined =>
    problems.get(path) ??
    serverErrors?.fieldErrors.find((e) => e.path === path || e.path.startsWith(`${path}.`))?.message;

  const change = (next: DocumentDraft, structural = false) => {
    setDraft(next);
    setNews(null);
    // The server's paths name positions: once rules move, they would point at the wrong one.
    if (structural) setServerErrors(undefined);
  };

  async function save(revision: number, mine: DocumentDraft) {
    setBusy(true);
    setFailure(undefined);
    setServerErrors(undefined);
    try {
      const answer = await platformApi<RoutingDocument>('PUT', RULES_PATH, {
        body: bodyOf(mine),
        headers: { 'if-match': `"${revision}"` },
      });
      const next = draftOf(answer);
      setSaved(answer);
      setBase(next);
      setDraft(next);
      setConflict(null);
      setChecked(false);
      setNews(
        `The rules are saved (revision ${answer.revision}). New alerts are routed by them from now on.`,
      );
    } catch (reason) {
      const error = asApiError(reason);
      if (error.status === 409) {
        try {
          setConflict(await platformApi<RoutingDocument>('GET', RULES_PATH));
        } catch (again) {
          setFailure(asApiError(again));
        }
      } else if (error.fieldErrors.length > 0) {
        setServerErrors(error);
        setAttempt((n) => n + 1);
      } else {
        setFailure(error);
      }
    } finally {
      setBusy(false);
    }
  }

  const placed = (path: string) => path.startsWith('rules.') || path.startsWith('defaults.');
  const unplaced = serverErrors?.fieldErrors.filter((e) => !placed(e.path)) ?? [];

  return (
    <>
      {news ? <Notice tone="success">{news}</Notice> : null}
      {conflict ? (
        <RuleConflict
          theirs={draftOf(conflict)}
          theirRevision={conflict.revision}
          mine={draft}
          channelName={channelName}
          busy={busy}
          onKeepMine={() => void save(conflict.revision, draft)}
          onTakeTheirs={() => {
            const theirs = draftOf(conflict);
            setSaved(conflict);
            setBase(theirs);
            setDraft(theirs);
            setConflict(null);
            setServerErrors(undefined);
            setNews(`Their version (revision ${conflict.revision}) is shown; your changes were discarded.`);
          }}
        />
      ) : null}
      <form
        ref={form}
        class="stack rules-form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          setChecked(true);
          setAttempt((n) => n + 1);
          if (documentProblems(draft).size > 0) return;
          void save(saved.revision, draft);
        }}
      >
        {serverErrors ? (
          <div class="notice notice-error" role="alert">
            <strong>The rules were not saved.</strong> {serverErrors.message}
            {unplaced.length > 0 ? (
              <ul>
                {unplaced.map((e) => (
                  <li key={e.path}>
                    <code>{e.path}</code>: {e.message}
                  </li>
                ))}
              </ul>
            ) : (
              ' The problem is shown on its field below.'
            )}
          </div>
        ) : null}
        {checked && problems.size > 0 ? (
          <div class="notice notice-error" role="alert">
            <strong>Not saved yet:</strong>{' '}
            {problems.size === 1 ? 'one field needs' : `${problems.size} fields need`} attention, shown below.
          </div>
        ) : null}
        <ErrorNotice error={failure} title="The rules were not saved." />
        <section class="card stack" aria-labelledby="rules-defaults-title">
          <h2 id="rules-defaults-title">Defaults</h2>
          <p class="muted">
            Where an alert goes when no rule matches it, and how often a firing alert is repeated.
          </p>
          <RuleChannelPicker
            legend="Send unmatched alerts to"
            channels={channels}
            selected={draft.defaults.channelIds}
            onChange={(channelIds) => change({ ...draft, defaults: { ...draft.defaults, channelIds } })}
            error={errorAt('defaults.channelIds')}
            hint="None: alerts that no rule matches are not sent anywhere."
          />
          <RuleInterval
            legend="Default repeat interval"
            value={draft.defaults.repeat}
            onChange={(repeat) => change({ ...draft, defaults: { ...draft.defaults, repeat } })}
            error={errorAt('defaults.repeatIntervalSeconds')}
            hint="How long before an alert still firing is sent again to the same channel (at most 7 days)."
          />
        </section>
        <section class="stack" aria-labelledby="rules-list-title">
          <div class="row-between">
            <h2 id="rules-list-title">Rules, in order</h2>
          </div>
          <p class="muted">
            Each alert is checked against the enabled rules from the top; the first that matches decides where
            it goes, unless it says to continue.
          </p>
          {draft.rules.length === 0 ? (
            <p class="rules-none">No rules: every alert goes to the defaults’ channels.</p>
          ) : (
            <ol class="rule-list">
              {draft.rules.map((rule, r) => (
                <RuleCard
                  key={rule.key}
                  rule={rule}
                  index={r}
                  count={draft.rules.length}
                  channels={channels}
                  defaultRepeat={draft.defaults.repeat}
                  onChange={(next) =>
                    change({ ...draft, rules: draft.rules.map((x, i) => (i === r ? next : x)) })
                  }
                  onMove={(by) => {
                    const rules = [...draft.rules];
                    const [moved] = rules.splice(r, 1);
                    if (moved) rules.splice(r + by, 0, moved);
                    change({ ...draft, rules }, true);
                  }}
                  onRemove={() => change({ ...draft, rules: draft.rules.filter((_, i) => i !== r) }, true)}
                  errorAt={(path) => errorAt(`rules.${r}.${path}`)}
                />
              ))}
            </ol>
          )}
          <div>
            <button
              type="button"
              class="button"
              onClick={() => change({ ...draft, rules: [...draft.rules, newRule()] }, true)}
            >
              Add rule
            </button>
          </div>
        </section>
        <div class="rules-actions">
          <p class="muted" role="status">
            {dirty ? 'You have unsaved changes.' : `No unsaved changes (revision ${saved.revision}).`}
          </p>
          <div class="row">
            <button
              type="button"
              class="button"
              disabled={!dirty || busy}
              onClick={() => {
                setDraft(base);
                setServerErrors(undefined);
                setChecked(false);
              }}
            >
              Discard changes
            </button>
            <button
              type="submit"
              class="button button-primary"
              disabled={busy || conflict !== null}
              aria-busy={busy}
            >
              {busy ? 'Saving…' : 'Save rules'}
            </button>
          </div>
        </div>
      </form>
    </>
  );
}

/**
 * The operator console's routing rules (contract §9, §12): the alert routing document edited as
 * defaults and ordered rules, checked before saving, saved with If-Match; a conflict shows both
 * versions and loses nothing.
 */
export function RulesPage() {
  const loaded = useResource(load, 'rules');
  let body;
  if (loaded.error && !loaded.data)
    body = <ErrorNotice error={loaded.error} title="The rules could not be loaded." />;
  else if (!loaded.data) body = <Loading what="Loading the routing rules" />;
  else body = <RulesEditor initial={loaded.data.doc} channels={loaded.data.channels} />;
  return (
    <>
      <PageHeader
        title="Routing rules"
        description={
          <>
            Which of the platform’s alerts go to which <a href="/platform/alerting/channels">channel</a>, and
            how often a firing alert is repeated.
          </>
        }
      />
      {body}
    </>
  );
}

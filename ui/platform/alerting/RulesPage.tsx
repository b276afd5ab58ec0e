// The routing rules page (docs/operators/alerting.md): the document edited as a form, never as JSON, saved
// with If-Match; a conflict shows both versions side by side and loses nothing.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../../common/api.js';
import { useFocusFirstInvalid, useResource } from '../../common/hooks.js';
import { PageHeader } from '../../common/Layout.js';
import { ErrorNotice, Loading, Notice } from '../../common/Notice.js';
import { routes, type Channel, type RoutingDocument } from '../../common/routes.js';
import { platformApi } from '../key.js';
import { RuleCard, RuleChannelPicker, RuleInterval } from './RuleCard.js';
import {
  bodyOf,
  documentProblems,
  draftOf,
  newRule,
  ruleSummary,
  sameDocument,
  type DocumentDraft,
  type RuleDraft,
} from './rules.js';

/**
 * The routing document being edited: the revision saved, the draft it started from (`base`) and
 * the draft as changed. Leaving with unsaved changes asks first.
 */
function useRulesDocument(initial: RoutingDocument) {
  const [saved, setSaved] = useState(initial);
  const [base, setBase] = useState<DocumentDraft>(() => draftOf(initial));
  const [draft, setDraft] = useState<DocumentDraft>(() => draftOf(initial));
  const dirty = !sameDocument(base, draft);
  // Leaving (reload, closed tab, another site) with unsaved changes asks first.
  useEffect(() => {
    if (!dirty) return;
    const ask = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', ask);
    return () => window.removeEventListener('beforeunload', ask);
  }, [dirty]);

  /** The server's document (just saved, or another's) becomes what is edited. */
  const adopt = (doc: RoutingDocument) => {
    const next = draftOf(doc);
    setSaved(doc);
    setBase(next);
    setDraft(next);
  };
  return { saved, base, draft, setDraft, dirty, adopt };
}

const asApiError = (reason: unknown): ApiError =>
  reason instanceof ApiError ? reason : new ApiError(0, 'unknown', String(reason));

/**
 * Saving the routing document with If-Match: while it runs, what the server refused (by field, or
 * not), a conflict with another's revision, and the news once saved. A refusal by field focuses
 * the first marked control of `form`.
 */
function useRulesSave() {
  const [serverErrors, setServerErrors] = useState<ApiError | undefined>(undefined);
  const [failure, setFailure] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [news, setNews] = useState<string | null>(null);
  const [conflict, setConflict] = useState<RoutingDocument | null>(null);
  const [attempt, setAttempt] = useState(0);
  const form = useFocusFirstInvalid(attempt);

  async function save(revision: number, mine: DocumentDraft, onSaved: (answer: RoutingDocument) => void) {
    setBusy(true);
    setFailure(undefined);
    setServerErrors(undefined);
    try {
      const answer = await platformApi(routes.platform.replaceRules, {
        body: bodyOf(mine),
        headers: { 'if-match': `"${revision}"` },
      });
      onSaved(answer);
      setConflict(null);
      setNews(
        `The rules are saved (revision ${answer.revision}). New alerts are routed by them from now on.`,
      );
    } catch (reason) {
      await refused(asApiError(reason));
    } finally {
      setBusy(false);
    }
  }
  /** A refused save: a conflict shows both versions, field errors land on their fields, else the failure. */
  async function refused(error: ApiError) {
    if (error.status !== 409) {
      if (error.fieldErrors.length === 0) return setFailure(error);
      setServerErrors(error);
      return setAttempt((n) => n + 1);
    }
    try {
      setConflict(await platformApi(routes.platform.rules));
    } catch (again) {
      setFailure(asApiError(again));
    }
  }
  const focusInvalid = () => setAttempt((n) => n + 1);
  return {
    serverErrors,
    setServerErrors,
    failure,
    busy,
    news,
    setNews,
    conflict,
    setConflict,
    form,
    save,
    focusInvalid,
  };
}

/**
 * The routing rules editor: the document and its draft, checked before saving (`checked` once
 * submitted), saved with If-Match, and the choices after a conflict.
 */
function useRulesEditor(initial: RoutingDocument) {
  const doc = useRulesDocument(initial);
  const [checked, setChecked] = useState(false);
  const saving = useRulesSave();
  const { draft } = doc;
  const problems = checked ? documentProblems(draft) : new Map<string, string>();
  /** The message for a path: the browser's own check first, then the server's (same paths). */
  const errorAt = (path: string): string | undefined =>
    problems.get(path) ??
    saving.serverErrors?.fieldErrors.find((e) => e.path === path || e.path.startsWith(`${path}.`))?.message;

  const change = (next: DocumentDraft, structural = false) => {
    doc.setDraft(next);
    saving.setNews(null);
    // The server's paths name positions: once rules move, they would point at the wrong one.
    if (structural) saving.setServerErrors(undefined);
  };
  /** Saves the draft over `revision`. */
  const saveOver = (revision: number) =>
    void saving.save(revision, draft, (answer) => {
      doc.adopt(answer);
      setChecked(false);
    });
  const onSubmit = (event: Event) => {
    event.preventDefault();
    setChecked(true);
    saving.focusInvalid();
    if (documentProblems(draft).size > 0) return;
    saveOver(doc.saved.revision);
  };
  const takeTheirs = (theirs: RoutingDocument) => {
    doc.adopt(theirs);
    saving.setConflict(null);
    saving.setServerErrors(undefined);
    saving.setNews(`Their version (revision ${theirs.revision}) is shown; your changes were discarded.`);
  };
  const discard = () => {
    doc.setDraft(doc.base);
    saving.setServerErrors(undefined);
    setChecked(false);
  };
  return { doc, saving, checked, problems, errorAt, change, saveOver, onSubmit, takeTheirs, discard };
}

interface Line {
  title: string;
  text: string;
}

function linesOf(draft: DocumentDraft, channelName: (id: string) => string): Line[] {
  const defaults =
    draft.defaults.channelIds.length === 0
      ? 'no channel'
      : draft.defaults.channelIds.map(channelName).join(', ');
  return [
    {
      title: 'Defaults',
      text: `unmatched alerts → ${defaults}; repeat every ${draft.defaults.repeat.amount} ${draft.defaults.repeat.unit}`,
    },
    ...draft.rules.map((rule: RuleDraft, i) => ({
      title: `${i + 1}. ${rule.name.trim() || '(no name)'}`,
      text: ruleSummary(rule, channelName),
    })),
  ];
}

function Version({ heading, lines, other }: { heading: string; lines: Line[]; other: Set<string> }) {
  return (
    <section class="rule-version" aria-label={heading}>
      <h3>{heading}</h3>
      <ul class="plain-list">
        {lines.map((line, i) => {
          const differs = !other.has(`${line.title}\u0000${line.text}`);
          return (
            <li key={i} class={differs ? 'rule-version-differs' : undefined}>
              <strong>{line.title}</strong>
              {differs ? <span class="badge badge-warn">differs</span> : null}
              <span class="rule-version-text">{line.text}</span>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

/**
 * Someone saved the rules since this page read them (409 on If-Match). Both versions side by side,
 * what differs marked in words; the operator chooses. Nothing is dropped until they do.
 */
function RuleConflict({
  theirs,
  theirRevision,
  mine,
  channelName,
  busy,
  onKeepMine,
  onTakeTheirs,
}: {
  theirs: DocumentDraft;
  theirRevision: number;
  mine: DocumentDraft;
  channelName: (id: string) => string;
  busy: boolean;
  onKeepMine: () => void;
  onTakeTheirs: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const theirLines = linesOf(theirs, channelName);
  const myLines = linesOf(mine, channelName);
  const keyOf = (line: Line) => `${line.title}\u0000${line.text}`;
  return (
    <section class="card rule-conflict" role="alert" aria-labelledby="rule-conflict-title">
      <h2 id="rule-conflict-title" tabIndex={-1} ref={heading}>
        Someone else saved the rules meanwhile
      </h2>
      <p>
        The rules were changed (now revision {theirRevision}) after this page loaded them, so your changes
        were not saved. Nothing is lost: compare the two versions, then choose which one to keep.
      </p>
      <div class="rule-versions">
        <Version
          heading={`Theirs (saved, revision ${theirRevision})`}
          lines={theirLines}
          other={new Set(myLines.map(keyOf))}
        />
        <Version heading="Yours (not saved)" lines={myLines} other={new Set(theirLines.map(keyOf))} />
      </div>
      <div class="row">
        <button
          type="button"
          class="button button-primary"
          disabled={busy}
          aria-busy={busy}
          onClick={onKeepMine}
        >
          {busy ? 'Saving…' : 'Keep mine and save over theirs'}
        </button>
        <button type="button" class="button" disabled={busy} onClick={onTakeTheirs}>
          Take theirs (discard mine)
        </button>
      </div>
    </section>
  );
}

/**
 * Why the rules were not saved: the server's refusal (its fields not on the page listed), or the browser's
 * check.
 */
function RulesSaveErrors({
  serverErrors,
  checked,
  problems,
}: {
  serverErrors: ApiError | undefined;
  checked: boolean;
  problems: Map<string, string>;
}) {
  const placed = (path: string) => path.startsWith('rules.') || path.startsWith('defaults.');
  const unplaced = serverErrors?.fieldErrors.filter((e) => !placed(e.path)) ?? [];
  return (
    <>
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
    </>
  );
}

/** Whether there are unsaved changes, and Discard and Save. */
function RulesActions({
  dirty,
  busy,
  revision,
  blocked,
  onDiscard,
}: {
  dirty: boolean;
  busy: boolean;
  revision: number;
  /** A conflict waits for a choice: saving is off meanwhile. */
  blocked: boolean;
  onDiscard: () => void;
}) {
  return (
    <div class="rules-actions">
      <p class="muted" role="status">
        {dirty ? 'You have unsaved changes.' : `No unsaved changes (revision ${revision}).`}
      </p>
      <div class="row">
        <button type="button" class="button" disabled={!dirty || busy} onClick={onDiscard}>
          Discard changes
        </button>
        <button type="submit" class="button button-primary" disabled={busy || blocked} aria-busy={busy}>
          {busy ? 'Saving…' : 'Save rules'}
        </button>
      </div>
    </div>
  );
}

/** The defaults: where an alert no rule matches goes, and the repeat interval rules inherit. */
function RulesDefaults({
  draft,
  channels,
  change,
  errorAt,
}: {
  draft: DocumentDraft;
  channels: Channel[];
  change: (next: DocumentDraft) => void;
  errorAt: (path: string) => string | undefined;
}) {
  return (
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
  );
}

/** The rules in the order they are checked, each movable and removable, and a way to add one. */
function RulesList({
  draft,
  channels,
  change,
  errorAt,
}: {
  draft: DocumentDraft;
  channels: Channel[];
  /** `structural`: rules moved, came or went. */
  change: (next: DocumentDraft, structural?: boolean) => void;
  errorAt: (path: string) => string | undefined;
}) {
  return (
    <section class="stack" aria-labelledby="rules-list-title">
      <div class="rules-list-head">
        <h2 id="rules-list-title">Rules, in order</h2>
        <p class="muted">
          Each alert is checked against the enabled rules from the top; the first that matches decides where
          it goes, unless it says to continue.
        </p>
      </div>
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
  );
}

/** The routing document's editor, once loaded: the draft, saving with If-Match, a conflict's choice. */
function RulesEditor({ initial, channels }: { initial: RoutingDocument; channels: Channel[] }) {
  const editor = useRulesEditor(initial);
  const { doc, saving, errorAt, change } = editor;
  const { draft } = doc;
  const { conflict, busy } = saving;
  const names = new Map(channels.map((c) => [c.id, c.name]));
  const channelName = (id: string) => names.get(id) ?? id;
  return (
    <>
      {saving.news ? <Notice tone="success">{saving.news}</Notice> : null}
      {conflict ? (
        <RuleConflict
          theirs={draftOf(conflict)}
          theirRevision={conflict.revision}
          mine={draft}
          channelName={channelName}
          busy={busy}
          onKeepMine={() => editor.saveOver(conflict.revision)}
          onTakeTheirs={() => editor.takeTheirs(conflict)}
        />
      ) : null}
      <form ref={saving.form} class="stack rules-form" noValidate onSubmit={editor.onSubmit}>
        <RulesSaveErrors
          serverErrors={saving.serverErrors}
          checked={editor.checked}
          problems={editor.problems}
        />
        <ErrorNotice error={saving.failure} title="The rules were not saved." />
        <RulesDefaults draft={draft} channels={channels} change={change} errorAt={errorAt} />
        <RulesList draft={draft} channels={channels} change={change} errorAt={errorAt} />
        <RulesActions
          dirty={doc.dirty}
          busy={busy}
          revision={doc.saved.revision}
          blocked={conflict !== null}
          onDiscard={editor.discard}
        />
      </form>
    </>
  );
}

interface Loaded {
  doc: RoutingDocument;
  channels: Channel[];
}

async function load(signal: AbortSignal): Promise<Loaded> {
  const [doc, channels] = await Promise.all([
    platformApi(routes.platform.rules, { signal }),
    platformApi(routes.platform.channels, { query: { limit: 100 }, signal }),
  ]);
  return { doc, channels: channels.data };
}

/**
 * The operator console's routing rules (docs/operators/alerting.md, docs/operators/web-ui.md): the alert
 * routing document edited as defaults and ordered rules, checked before saving, saved with If-Match; a
 * conflict shows both versions and loses nothing.
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

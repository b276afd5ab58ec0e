// What a page says besides its content: failures in words, notices, what just happened (lasting
// as long as what it announces), empty lists, loading, status badges, and a role that cannot.
import type { ComponentChildren, Ref } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiError } from './api.js';
import { roleName } from './format.js';
import { session } from './session.js';

/** A failure, said in words; announced to screen readers as it appears. */
export function ErrorNotice({ error, title }: { error: ApiError | undefined; title?: string }) {
  if (!error) return null;
  return (
    <div class="notice notice-error" role="alert">
      {title ? <strong>{title} </strong> : null}
      {error.message}
      {error.requestId ? <span class="notice-meta"> Request ID: {error.requestId}</span> : null}
    </div>
  );
}

export function Notice({
  tone = 'info',
  children,
}: {
  tone?: 'info' | 'warning' | 'success';
  children: ComponentChildren;
}) {
  return (
    <div class={`notice notice-${tone}`} role={tone === 'info' ? undefined : 'status'}>
      {children}
    </div>
  );
}

/** What just happened: a sentence, or a sentence with its tone and the one thing to do next. */
export type Done =
  string | { tone: 'success' | 'warning'; text: string; action?: { label: string; run: () => void } };

/**
 * What just happened, focusable so that it can take the focus (see `useDoneNotice`), with its next
 * step if any and a way to dismiss it.
 */
export function DoneNotice({
  done,
  noticeRef,
  onDismiss,
  extraClass,
}: {
  done: Done | null;
  noticeRef: Ref<HTMLParagraphElement>;
  onDismiss: () => void;
  /** A class of its own, for where the notice sits. */
  extraClass?: string;
}) {
  if (!done) return null;
  const { tone, text, action } = typeof done === 'string' ? { tone: 'success' as const, text: done } : done;
  // The sentence takes the focus, so that a screen reader reads the news first; its next step and
  // "Dismiss" follow in the same status.
  return (
    <div class={`notice notice-${tone} done-notice${extraClass ? ` ${extraClass}` : ''}`} role="status">
      <p ref={noticeRef} tabIndex={-1} class="focus-target">
        {text}
      </p>
      <div class="row">
        {action ? (
          <button type="button" class="button button-small button-primary" onClick={action.run}>
            {action.label}
          </button>
        ) : null}
        <button type="button" class="button button-small button-quiet" onClick={onDismiss}>
          Dismiss<span class="visually-hidden"> this message</span>
        </button>
      </div>
    </div>
  );
}

/**
 * What just happened, said in a notice that takes the focus as it appears: the button that did it
 * may be gone (a revoked row has none). It lasts as long as what it announces is on screen: it goes
 * when `scope` changes (another page of the list, other filters), when the next action starts
 * (`setDone(null)`), or when dismissed.
 */
export function useDoneNotice(scope = '') {
  const [done, setDone] = useState<Done | null>(null);
  const ref = useRef<HTMLParagraphElement>(null);
  const shownFor = useRef(scope);
  useEffect(() => {
    if (done) ref.current?.focus();
  }, [done]);
  useEffect(() => {
    if (shownFor.current === scope) return;
    shownFor.current = scope;
    setDone(null);
  }, [scope]);
  return { done, setDone, ref, dismiss: () => setDone(null) };
}

/** A list with nothing in it says what to do next. */
export function EmptyState({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <h2 class="empty-title">{title}</h2>
      {children}
    </div>
  );
}

/** Shown while a page's data is on its way. */
export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="loading" role="status">
      <span class="spinner" aria-hidden="true" />
      {what}…
    </p>
  );
}

/** A status word with a colour that agrees with it; the word carries the meaning, not the colour. */
const TONES: Record<string, 'good' | 'bad' | 'warn' | 'neutral' | 'busy'> = {
  active: 'good',
  healthy: 'good',
  delivered: 'good',
  disabled: 'neutral',
  revoked: 'neutral',
  cancelled: 'neutral',
  skipped: 'neutral',
  paused: 'warn',
  expired: 'warn',
  degraded: 'warn',
  retrying: 'warn',
  pending: 'busy',
  invited: 'busy',
  delivering: 'busy',
  failed: 'bad',
};

export function StatusBadge({ status, label }: { status: string; label?: string }) {
  return <span class={`badge badge-${TONES[status] ?? 'neutral'}`}>{label ?? status}</span>;
}

/**
 * For a person whose role cannot manage keys (or read the audit log): said in words, instead of a
 * refusal from the API or a page that seems broken.
 */
export function RoleNotice({ what }: { what: string }) {
  const role = session.value?.user.role;
  return (
    <Notice tone="warning">
      <strong>
        Your role{role ? ` (${roleName(role)})` : ''} cannot {what}.
      </strong>{' '}
      A company IT admin, an executive or a platform admin of your organization can.
    </Notice>
  );
}

// The hooks every page uses: the tab's title, a resource loaded (and abandoned when replaced) and
// followed while the tab is visible, an action's busy and error, a link's fragment token, and focus on
// the first invalid field.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

/** Whose pages these are, after each page's title: hubgate, or the tenant's name on its portal. */
let titleOwner = 'hubgate';
export function setTitleOwner(owner: string): void {
  titleOwner = owner;
}

/** Sets the tab's title for the page on screen. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · ${titleOwner}`;
  }, [title]);
}

export interface Resource<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  /** Loads again, keeping what is shown until the new answer arrives. */
  reload(): void;
}

/**
 * Loads what a page shows, again whenever `key` changes (a filter, a page of a list); a request
 * that a newer one replaced, or whose page closed, is abandoned.
 */
export function useResource<T>(load: (signal: AbortSignal) => Promise<T>, key: string): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  const loader = useRef(load);
  loader.current = load;

  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    loader
      .current(controller.signal)
      .then((value) => {
        if (controller.signal.aborted) return;
        setData(value);
        setError(undefined);
      })
      .catch((reason: unknown) => {
        if (controller.signal.aborted) return;
        setError(reason instanceof ApiError ? reason : new ApiError(0, 'unknown', String(reason)));
      })
      .finally(() => {
        if (!controller.signal.aborted) setLoading(false);
      });
    return () => controller.abort();
  }, [key, round]);

  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { data, error, loading, reload };
}

/** Whether the tab is visible now; follows the browser's visibility changes. */
export function useTabVisible(): boolean {
  const [visible, setVisible] = useState(() => document.visibilityState === 'visible');
  useEffect(() => {
    const update = () => setVisible(document.visibilityState === 'visible');
    document.addEventListener('visibilitychange', update);
    return () => document.removeEventListener('visibilitychange', update);
  }, []);
  return visible;
}

/** How often a page reads again what the system may change by itself. */
export const FOLLOW_MS = 5000;

/**
 * Reads `resource` again every `everyMs` while the tab is visible, for what changes without the page
 * (the worker pauses a failing connection, another person or an API call changes it): what is shown
 * follows without a reload. The next read is timed from the end of the last, so reads never overlap;
 * a hidden tab asks nothing, and reads at once when it is shown again. A page that is gone asks
 * nothing more: a portal session that ended takes its pages, and so their reads, away.
 */
export function useFollow(resource: Pick<Resource<unknown>, 'loading' | 'reload'>, everyMs = FOLLOW_MS) {
  const visible = useTabVisible();
  const { loading, reload } = resource;
  useEffect(() => {
    if (loading || !visible) return;
    const timer = setTimeout(reload, everyMs);
    return () => clearTimeout(timer);
  }, [loading, visible, reload, everyMs]);
  const hidden = useRef(false);
  useEffect(() => {
    if (!visible) hidden.current = true;
    else if (hidden.current) {
      hidden.current = false;
      reload();
    }
  }, [visible]);
}

/** A form submission: `busy` while it runs, the error it ended with, if any. */
export function useAction<A extends unknown[], R>(action: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const run = useCallback(
    async (...args: A): Promise<R | undefined> => {
      setBusy(true);
      setError(undefined);
      try {
        return await action(...args);
      } catch (reason) {
        setError(reason instanceof ApiError ? reason : new ApiError(0, 'unknown', String(reason)));
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [action],
  );
  return { run, busy, error, setError };
}

/** The one-time token from `#token=…`: the fragment never reaches a server or a log. */
function tokenFromFragment(): string | null {
  const match = /(?:^#|&)token=([A-Za-z0-9]+)/.exec(window.location.hash);
  return match?.[1] ?? null;
}

/** The token of a link (setup, invitation) from `#token=…`, kept up to date with the address bar. */
export function useFragmentToken(): string | null {
  const [token, setToken] = useState(tokenFromFragment);
  // A link pasted into this tab changes only the fragment: no page load reads it.
  useEffect(() => {
    const read = () => setToken(tokenFromFragment());
    window.addEventListener('hashchange', read);
    return () => window.removeEventListener('hashchange', read);
  }, []);
  return token;
}

/** Moves focus to the first control that says it is wrong, after a refused submit. */
export function useFocusFirstInvalid(attempt: number) {
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (attempt === 0) return;
    form.current
      ?.querySelector<HTMLElement>('[aria-invalid="true"], .field-invalid input:not(:disabled)')
      ?.focus();
  }, [attempt]);
  return form;
}

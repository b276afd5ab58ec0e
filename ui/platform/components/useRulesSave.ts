import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../../api.js';
import { platformApi } from '../key.js';
import { bodyOf, RULES_PATH, type DocumentDraft, type RoutingDocument } from './RuleModel.js';

const asApiError = (reason: unknown): ApiError =>
  reason instanceof ApiError ? reason : new ApiError(0, 'unknown', String(reason));

/**
 * Saving the routing document with If-Match: while it runs, what the server refused (by field, or
 * not), a conflict with another's revision, and the news once saved. A refusal by field focuses
 * the first marked control of `form`.
 */
export function useRulesSave() {
  const [serverErrors, setServerErrors] = useState<ApiError | undefined>(undefined);
  const [failure, setFailure] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [news, setNews] = useState<string | null>(null);
  const [conflict, setConflict] = useState<RoutingDocument | null>(null);
  const [attempt, setAttempt] = useState(0);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (attempt === 0) return;
    form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [attempt]);

  async function save(revision: number, mine: DocumentDraft, onSaved: (answer: RoutingDocument) => void) {
    setBusy(true);
    setFailure(undefined);
    setServerErrors(undefined);
    try {
      const answer = await platformApi<RoutingDocument>('PUT', RULES_PATH, {
        body: bodyOf(mine),
        headers: { 'if-match': `"${revision}"` },
      });
      onSaved(answer);
      setConflict(null);
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

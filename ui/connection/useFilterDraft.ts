import { useEffect, useState } from 'preact/hooks';
import { filterKey, filterProblems, type FilterProblems, type LogFilters } from './logFilters.js';

/**
 * The filter form's values before they are applied: text and times are applied with the form (Enter
 * or "Apply"); a choice from a list is applied at once, with whatever else was typed. `apply` puts
 * them in the page's URL, which is what the log shows.
 */
export function useFilterDraft(filters: LogFilters, apply: (filters: LogFilters) => void) {
  const [draft, setDraft] = useState(filters);
  const [several, setSeveral] = useState(filters.status.length > 1);
  const key = filterKey(filters);
  // The URL changed (applied, back button, a link): the form shows what the log shows.
  useEffect(() => {
    setDraft(filters);
    if (filters.status.length > 1) setSeveral(true);
  }, [key]);

  const [problems, setProblems] = useState<FilterProblems>({});
  const applyDraft = (typed: LogFilters) => {
    const next = { ...typed, eventType: typed.eventType.trim(), eventId: typed.eventId.trim() };
    const found = filterProblems(next);
    setProblems(found);
    // What the API would refuse is said on its field, and nothing is applied until it is corrected.
    if (Object.keys(found).length === 0) apply(next);
  };
  const edit = (change: Partial<LogFilters>) => setDraft((current) => ({ ...current, ...change }));
  const choose = (change: Partial<LogFilters>) => applyDraft({ ...draft, ...change });
  const changed = filterKey(draft) !== key;
  const clear = (none: LogFilters) => {
    setSeveral(false);
    setProblems({});
    apply(none);
  };
  const submit = () => applyDraft(draft);
  return { draft, edit, choose, submit, clear, changed, several, setSeveral, problems };
}

export type FilterDraft = ReturnType<typeof useFilterDraft>;

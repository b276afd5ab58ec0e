import { useState } from 'preact/hooks';
import { documentProblems, type DocumentDraft, type RoutingDocument } from './RuleModel.js';
import { useRulesDocument } from './useRulesDocument.js';
import { useRulesSave } from './useRulesSave.js';

/**
 * The routing rules editor: the document and its draft, checked before saving (`checked` once
 * submitted), saved with If-Match, and the choices after a conflict.
 */
export function useRulesEditor(initial: RoutingDocument) {
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

export type RulesEditorState = ReturnType<typeof useRulesEditor>;

import { useEffect, useState } from 'preact/hooks';
import { draftOf, sameDocument, type DocumentDraft, type RoutingDocument } from './RuleModel.js';

/**
 * The routing document being edited: the revision saved, the draft it started from (`base`) and
 * the draft as changed. Leaving with unsaved changes asks first.
 */
export function useRulesDocument(initial: RoutingDocument) {
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

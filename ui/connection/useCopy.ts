import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * Copies `text` to the clipboard; where the browser refuses, selects the element in `target` so that
 * Ctrl+C does it. `copied` says which happened, for a few seconds.
 */
export function useCopy<T extends HTMLElement>(text: string) {
  const target = useRef<T>(null);
  const [copied, setCopied] = useState<'yes' | 'select' | null>(null);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(null), 4000);
    return () => clearTimeout(timer);
  }, [copied]);

  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('yes');
    } catch {
      const element = target.current;
      if (element) {
        const range = document.createRange();
        range.selectNodeContents(element);
        const selection = window.getSelection();
        selection?.removeAllRanges();
        selection?.addRange(range);
      }
      setCopied('select');
    }
  }
  return { target, copied, copy };
}

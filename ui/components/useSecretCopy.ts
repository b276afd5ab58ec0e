import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * Copying a secret shown once: to the clipboard, or selected in `input` where the browser refuses.
 * Until it is copied, leaving the page asks first.
 */
export function useSecretCopy(secret: string, onCopied: (() => void) | undefined) {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);

  // A reload or a closed tab would lose it for good: until it is copied, the browser asks first.
  useEffect(() => {
    if (copied === 'yes') return;
    const ask = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', ask);
    return () => window.removeEventListener('beforeunload', ask);
  }, [copied]);

  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('yes');
      onCopied?.();
    } catch {
      // Clipboard access can be refused (no permission, not a secure context): select it instead.
      input.current?.select();
      setCopied('failed');
    }
  }
  return { input, copied, copy };
}

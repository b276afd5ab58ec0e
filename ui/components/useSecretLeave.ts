import { useState } from 'preact/hooks';

/**
 * Leaving a dialog that shows secrets once: until every one was copied, leaving asks first
 * (`confirming`) instead of closing.
 */
export function useSecretLeave(secrets: Record<string, string> | null, onClose: () => void) {
  const [copiedKeys, setCopiedKeys] = useState<Set<string>>(new Set());
  const [confirming, setConfirming] = useState(false);
  const allCopied = secrets !== null && Object.keys(secrets).every((key) => copiedKeys.has(key));
  const leave = () => {
    if (secrets && !allCopied) setConfirming(true);
    else onClose();
  };
  const copied = (key: string) => setCopiedKeys((current) => new Set(current).add(key));
  return { confirming, setConfirming, copied, leave };
}

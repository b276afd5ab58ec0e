import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * What just happened, said in a notice that takes the focus as it appears: the button that did it
 * may be gone (a revoked row has none).
 */
export function useDoneNotice() {
  const [done, setDone] = useState<string | null>(null);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (done) ref.current?.focus();
  }, [done]);
  return { done, setDone, ref };
}

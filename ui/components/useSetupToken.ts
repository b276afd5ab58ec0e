import { useEffect, useState } from 'preact/hooks';

/** The one-time token from `#token=…`: the fragment never reaches a server or a log. */
function tokenFromFragment(): string | null {
  const match = /(?:^#|&)token=([A-Za-z0-9]+)/.exec(window.location.hash);
  return match?.[1] ?? null;
}

/** The setup link's token, kept up to date with the address bar. */
export function useSetupToken(): string | null {
  const [token, setToken] = useState(tokenFromFragment);
  // A link pasted into this tab changes only the fragment: no page load reads it.
  useEffect(() => {
    const read = () => setToken(tokenFromFragment());
    window.addEventListener('hashchange', read);
    return () => window.removeEventListener('hashchange', read);
  }, []);
  return token;
}

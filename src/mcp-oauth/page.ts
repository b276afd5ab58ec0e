const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The page /oauth/authorize shows when it cannot trust the client or its redirect URI: sending the
 * browser anywhere then would make hubgate an open redirector (RFC 6749 §4.1.2.1).
 */
export function authorizeErrorPage(message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Cannot connect this application · hubgate</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1b1f24;background:#fff}
@media (prefers-color-scheme: dark){body{color:#e6e8eb;background:#14171a}}h1{font-size:1.4rem}</style>
</head><body><main><h1>This application cannot connect to hubgate</h1>
<p>${escapeHtml(message)}</p>
<p>Nothing was shared. Go back to the application and check how it is set up, or ask its maker.</p>
</main></body></html>`;
}

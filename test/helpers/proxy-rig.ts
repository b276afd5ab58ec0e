import type { ServerResponse } from 'node:http';
import type { Harness } from './harness.js';
import { startOAuthProvider, type TestOAuthProvider } from './oauth-provider.js';
import { startReceiver, type Received, type Receiver } from './receiver.js';

export type ApiHandler = (request: Received, response: ServerResponse) => void | Promise<void>;

/**
 * What the credential proxy's tests stand on (test/oauth/proxy.test.ts, hostile.test.ts,
 * test/mcp/proxy-tool.test.ts): a real OAuth 2.0 provider (oidc-provider on 127.0.0.1) whose
 * redirect URI is the harness's callback, and a real HTTP API on 127.0.0.1 that records in
 * `tokensSeen` every bearer token it is sent and answers as `handle` says.
 */
export async function startProxyRig(
  h: Harness,
  tokensSeen: Set<string>,
  handle: ApiHandler,
  callbackPath = '/api/v1/oauth/callback',
): Promise<{ idp: TestOAuthProvider; api: Receiver; close: () => Promise<unknown> }> {
  const closing: Array<() => unknown> = [];
  const cleanup = { after: (fn: () => unknown) => closing.push(fn) };
  const redirectUri = new URL(callbackPath, h.config.publicUrl).href;
  const idp = await startOAuthProvider(cleanup, { redirectUri });
  const api = await startReceiver(cleanup, async (request, _i, response) => {
    const token = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
    if (token) tokensSeen.add(token);
    await handle(request, response);
  });
  return { idp, api, close: () => Promise.all(closing.map((fn) => fn())) };
}

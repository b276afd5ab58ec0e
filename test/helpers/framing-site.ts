import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A site of its own on 127.0.0.1 (another site than the UI's `localhost`, not only another origin):
 * one page that frames the address last given to `framing`, as a platform frames its portal.
 */
export async function framingSite(): Promise<{
  origin: string;
  server: Server;
  /** Frames `src` from now on; answers the site's page to open. */
  framing: (src: string) => string;
}> {
  let src = '';
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(
      `<!doctype html><html lang="en"><title>Platform</title><main><h1>Your webhooks</h1>` +
        `<iframe title="Webhooks portal" src="${src}" width="1100" height="760"></iframe></main></html>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    server,
    framing: (next) => {
      src = next;
      return `${origin}/`;
    },
  };
}

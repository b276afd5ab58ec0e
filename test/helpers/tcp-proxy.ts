import { connect, createServer, type Server, type Socket } from 'node:net';

/** A TCP pass-through on 127.0.0.1 that a test can cut and restore, to take a server "away". */
export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const makeServer = () =>
    createServer((client) => {
      const upstream = connect(targetPort, targetHost);
      track(client);
      track(upstream);
      client.pipe(upstream).pipe(client);
    });
  const listen = (server: Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
  let server: Server | null = makeServer();
  const port = await listen(server, 0);
  const stop = async () => {
    const s = server;
    server = null;
    for (const socket of sockets) socket.destroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  return {
    port,
    cut: stop,
    async restore() {
      if (server) return;
      server = makeServer();
      await listen(server, port);
    },
    close: stop,
  };
}

/** A proxy in front of the PostgreSQL at `url`, and the URL that reaches it through the proxy. */
export async function startDatabaseProxy(url: string): Promise<{ proxy: TcpProxy; url: string }> {
  const target = new URL(url);
  const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  target.hostname = '127.0.0.1';
  target.port = String(proxy.port);
  return { proxy, url: target.toString() };
}

/**
 * A TCP pass-through on 127.0.0.1 that can withhold what the server says while the client's bytes
 * still reach it: a broker that takes publishes but sends no confirm, so the client holds them in
 * flight. `flow()` passes on what was withheld and everything after, or, with `discard`, only what
 * comes after (the answers given while stalled are lost, as from a broker that never sent them).
 */
export interface StallingProxy {
  port: number;
  stall(): void;
  flow(): void;
  /** Drops every connection through the proxy (the server went away), while it still takes new ones. */
  drop(): void;
  close(): Promise<void>;
}

/**
 * Keeps `client` and `upstream` in `sockets` while they are open, and ends each with the other: a
 * pass-through whose one side closes or fails closes the other.
 */
export function pair(client: Socket, upstream: Socket, sockets: Set<Socket>): void {
  for (const socket of [client, upstream]) {
    sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      sockets.delete(socket);
      client.destroy();
      upstream.destroy();
    });
  }
}

export async function startStallingProxy(
  targetHost: string,
  targetPort: number,
  options: { discard?: boolean } = {},
): Promise<StallingProxy> {
  let stalled = false;
  const held: Array<{ client: Socket; chunk: Buffer }> = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, targetHost);
    pair(client, upstream, sockets);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (!stalled) client.write(chunk);
      else if (!options.discard) held.push({ client, chunk });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    stall: () => {
      stalled = true;
    },
    flow: () => {
      stalled = false;
      for (const { client, chunk } of held.splice(0)) if (!client.destroyed) client.write(chunk);
    },
    drop: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The marker of a unit test file: `import '../helpers/unit.js';` among its imports. `npm run test:unit`
 * runs exactly the files that import this module (scripts/test.mjs reads the import), and this module
 * makes sure they deserve to be there: in every run, `npm test` included, a test in such a file that
 * opens a database, starts a server, connects anywhere, looks up a name or starts a process fails at
 * once, naming what it tried. A file cannot stay marked and quietly come to need a database.
 */
import childProcess from 'node:child_process';
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { PGlite } from '@electric-sql/pglite';

const refuse = (what: string) => () => {
  throw new Error(
    `a unit test (it imports test/helpers/unit.js) must not ${what}: test it without, or drop the marker`,
  );
};

net.Server.prototype.listen = refuse('start a server (listen)');
net.Socket.prototype.connect = refuse('open a connection');
dns.lookup = refuse('look up a host name') as unknown as typeof dns.lookup;
dns.promises.lookup = refuse('look up a host name');
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
  (childProcess as Record<typeof name, unknown>)[name] = refuse(`start a process (${name})`);
}
// `import { spawn } from 'node:child_process'` in a module loaded later sees the replacements too.
syncBuiltinESMExports();
// src/db/database.ts opens every embedded database (file or memory) with PGlite.create.
PGlite.create = refuse('open a database (PGlite)');

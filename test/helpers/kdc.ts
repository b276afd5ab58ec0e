import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/**
 * A throwaway MIT Kerberos realm for SSO tests (docs/operators/sso.md), built the way PostgreSQL's
 * `src/test/kerberos` and MIT's own `k5test.py` build theirs: generated `krb5.conf` and `kdc.conf` in a
 * temporary folder, `kdb5_util create -s`, principals from `kadmin.local`, and `krb5kdc -n` in the
 * foreground on a free port of 127.0.0.1. Nothing runs as a system service, nothing reads or writes
 * /etc, and nothing leaves loopback: DNS lookups and hostname canonicalisation are off.
 *
 * The MIT library reads its configuration from the environment (`KRB5_CONFIG`, `KRB5_KTNAME`,
 * `KRB5CCNAME`, `KRB5RCACHEDIR`), so every command here runs with an explicit environment built from
 * `Kdc.env`, never the test process's own. A test that calls the `kerberos` module in its own process
 * has to copy `Kdc.env` into `process.env` (see `useKerberosEnv`).
 */

/** Set by CI (`.ci/run`): there, missing Kerberos tools are a failure, never a skip. */
const kerberosRequired = process.env.HUBGATE_REQUIRE_KERBEROS === '1';

const INSTALL_HINT =
  'install with: apt-get install -y krb5-kdc krb5-admin-server krb5-user libkrb5-dev, then npm ci (builds the kerberos module)';

/** The realm tests use unless they need a second one. */
export const TEST_REALM = 'HUBGATE.TEST';

// Debian puts the KDC's tools in /usr/sbin, which is not on every user's PATH.
const SEARCH_PATH = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin'];

function findTool(name: string): string | undefined {
  for (const dir of SEARCH_PATH) {
    if (!dir) continue;
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not in this folder; try the next
    }
  }
  return undefined;
}

const TOOLS = ['krb5kdc', 'kdb5_util', 'kadmin.local', 'kinit'] as const;
type Tool = (typeof TOOLS)[number];

function tool(name: Tool): string {
  const path = findTool(name);
  if (!path) assert.fail(`${name} not found: ${INSTALL_HINT}`);
  return path;
}

/** Why the `kerberos` module cannot be loaded (not installed, or its native build failed), if it cannot. */
function kerberosModuleProblem(): string | undefined {
  try {
    createRequire(import.meta.url)('kerberos');
    return undefined;
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return `the kerberos module does not load (${message})`;
  }
}

/** Why `curl --negotiate` cannot be used here, if it cannot (curl missing, or built without SPNEGO). */
function curlProblem(): string | undefined {
  const curl = findTool('curl');
  if (!curl) return 'curl not found';
  const features = execFileSync(curl, ['--version'], { encoding: 'utf8' });
  return /^Features:.*\bSPNEGO\b/m.test(features) ? undefined : 'curl has no SPNEGO support';
}

/**
 * Why Kerberos tests cannot run here, for `test(name, { skip: kerberosSkipReason() }, …)`; undefined
 * when they can (krb5kdc, kdb5_util, kadmin.local, kinit and the built `kerberos` module are all here,
 * and curl when `curl: true`). With HUBGATE_REQUIRE_KERBEROS=1 nothing is a reason to skip: the tests
 * run and fail where the missing piece is used (`startKdc`, or loading `kerberos`).
 */
export function kerberosSkipReason(options: { curl?: boolean } = {}): string | undefined {
  if (kerberosRequired) return undefined;
  const missing: string[] = TOOLS.filter((name) => !findTool(name)).map((name) => `${name} not found`);
  const moduleProblem = kerberosModuleProblem();
  if (moduleProblem) missing.push(moduleProblem);
  const curl = options.curl ? curlProblem() : undefined;
  if (curl) missing.push(curl);
  if (missing.length === 0) return undefined;
  return `Kerberos unavailable: ${missing.join(', ')}; ${INSTALL_HINT}`;
}

/**
 * What the MIT library and tools need to use one realm, and nothing that could reach the machine's
 * own Kerberos setup: `KRB5CCNAME` and `KRB5RCACHEDIR` point into the realm's folder too.
 */
export interface KerberosEnv {
  /** The generated krb5.conf (libdefaults, the realm's KDC at 127.0.0.1:port, domain_realm). */
  KRB5_CONFIG: string;
  /** The generated kdc.conf (database, stash, listen addresses, logs). */
  KRB5_KDC_PROFILE: string;
  /** The acceptor keytab: the service principals given to `startKdc`. */
  KRB5_KTNAME: string;
  /** The credential cache (`FILE:…`): an empty one of the realm's own, or a user's after `kinit`. */
  KRB5CCNAME: string;
  /** Where the replay cache lives (`krb5_<uid>.rcache2`); by default /var/tmp, shared by the machine. */
  KRB5RCACHEDIR: string;
  /** Set when `startKdc({ trace: true })`: the library's trace of every call, for debugging. */
  KRB5_TRACE?: string;
}

export interface KdcOptions {
  /** Default `HUBGATE.TEST`. Two realms may even share a name (a second KDC is "a wrong service key"). */
  realm?: string;
  /** Service principals created with random keys and written to `keytab`; default `['HTTP/localhost']`. */
  services?: string[];
  /** User principals (name without realm) and their passwords. */
  users?: Record<string, string>;
  /** Write the library's trace to `<dir>/trace.log` (KRB5_TRACE) in every command the realm runs. */
  trace?: boolean;
}

export interface Kinit {
  /** `name@REALM`. */
  principal: string;
  /** The credential cache file holding the user's ticket-granting ticket. */
  ccache: string;
  /** The realm's environment with `KRB5CCNAME` at this cache: for curl, or for `useKerberosEnv`. */
  env: KerberosEnv;
}

export interface Kdc {
  realm: string;
  /** The temporary folder that holds everything; removed by `stop`. */
  dir: string;
  /** The KDC's port on 127.0.0.1 (UDP and TCP). */
  port: number;
  /** The service keytab (`env.KRB5_KTNAME` is `FILE:` and this path). */
  keytab: string;
  /** The KDC's own log: what it issued and refused, worth reading when a test fails. */
  logFile: string;
  env: KerberosEnv;
  /** A ticket-granting ticket for a user of this realm, in a credential cache of its own. */
  kinit(user: string, password?: string): Promise<Kinit>;
  /**
   * Adds a principal: a user with `password`, or else a service with a random key, written to
   * `keytab` (default: the realm's keytab) when given or when it is a service (it has a `/`).
   */
  addPrincipal(name: string, options?: { password?: string; keytab?: string }): Promise<void>;
  /** Runs one `kadmin.local` query against this realm's database; fails on any error it prints. */
  kadmin(query: string): Promise<string>;
  /**
   * Lets the users of `other` use this realm's services (one-way cross-realm trust): the same
   * `krbtgt/THIS@OTHER` key in both databases, and `other`'s krb5.conf taught where this KDC is, that
   * localhost belongs to this realm, and the direct path between the two ([capaths]).
   */
  trust(other: Kdc): Promise<void>;
  /** Stops the KDC and removes the folder. Safe to call twice. */
  stop(): Promise<void>;
}

/** A port that was free on 127.0.0.1 for both TCP and UDP a moment ago (the KDC listens on both). */
async function freeKdcPort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const tcp = createServer();
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(0, '127.0.0.1', resolve);
    });
    const { port } = tcp.address() as AddressInfo;
    const udp = createSocket('udp4');
    const udpFree = await new Promise<boolean>((resolve) => {
      udp.once('error', () => resolve(false));
      udp.bind(port, '127.0.0.1', () => resolve(true));
    });
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
    if (udpFree) await new Promise<void>((resolve) => udp.close(() => resolve()));
    else udp.close();
    if (udpFree) return port;
  }
  assert.fail('no port free for both TCP and UDP on 127.0.0.1 after 20 tries');
}

/** Only a minimal environment reaches the tools: the realm's variables, PATH, and English messages. */
function commandEnv(env: KerberosEnv): NodeJS.ProcessEnv {
  return { PATH: SEARCH_PATH.join(delimiter), LC_ALL: 'C', ...env };
}

interface RunResult {
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], env: KerberosEnv, input?: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { env: commandEnv(env), timeout: 30_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`${[file, ...args].join(' ')} failed: ${error.message.trim()}\n${stdout}${stderr}`));
        return;
      }
      resolve({ stdout, stderr });
    });
    // A tool that exits without reading its input closes the pipe (EPIPE): its exit status and output,
    // reported above, say what went wrong, so the write error adds nothing.
    child.stdin?.on('error', () => {});
    if (input === undefined) child.stdin?.end();
    else child.stdin?.end(input);
  });
}

// kadmin.local takes a whole query on its command line and splits it itself, so a password must be
// one plain word.
const PLAIN_WORD = /^[A-Za-z0-9._~+=@%:,/-]+$/;
const randomPassword = (): string => randomBytes(18).toString('base64url');

const conf = (sections: Record<string, string[]>): string =>
  Object.entries(sections)
    .map(([name, lines]) => `[${name}]\n${lines.map((line) => `\t${line}`).join('\n')}\n`)
    .join('\n');

/** What each realm's krb5.conf is generated from, kept to rewrite it when it learns a trust. */
const realmConfs = new WeakMap<Kdc, RealmConf>();

interface RealmConf {
  realm: string;
  dir: string;
  port: number;
  /** Realms whose services this realm's users may use: name → KDC port. */
  trusting: Map<string, number>;
}

function krb5Conf({ realm, dir, port, trusting }: RealmConf): string {
  const realms = [[realm, port] as const, ...trusting];
  // localhost names the realm whose services run there: this one, unless it trusts another's.
  const hostRealm = trusting.size > 0 ? [...trusting.keys()][0] : realm;
  return conf({
    libdefaults: [
      `default_realm = ${realm}`,
      // No DNS at all: not for KDCs, not for realms, not to canonicalise a host name (PostgreSQL's
      // test explains why: a reverse lookup that succeeds somewhere turns localhost into another name).
      'dns_lookup_kdc = false',
      'dns_lookup_realm = false',
      'dns_canonicalize_hostname = false',
      'rdns = false',
      'forwardable = false',
      `default_ccache_name = FILE:${join(dir, 'ccache')}`,
      `default_keytab_name = FILE:${join(dir, 'keytab')}`,
    ],
    realms: realms.flatMap(([name, kdcPort]) => [`${name} = {`, `\tkdc = 127.0.0.1:${kdcPort}`, '}']),
    domain_realm: [`localhost = ${hostRealm}`],
    capaths: [...trusting.keys()].flatMap((other) => [`${realm} = {`, `\t${other} = .`, '}']),
    logging: [`default = FILE:${join(dir, 'krb5lib.log')}`],
  });
}

function kdcConf({ realm, dir, port }: RealmConf): string {
  // kdc_listen/kdc_tcp_listen (MIT 1.15+) take an address: the KDC binds 127.0.0.1 only, for UDP and
  // TCP, where kdc_ports/kdc_tcp_ports would bind every interface.
  return conf({
    kdcdefaults: [`kdc_listen = 127.0.0.1:${port}`, `kdc_tcp_listen = 127.0.0.1:${port}`],
    realms: [
      `${realm} = {`,
      `\tdatabase_name = ${join(dir, 'principal')}`,
      `\tkey_stash_file = ${join(dir, 'stash')}`,
      `\tacl_file = ${join(dir, 'kadm5.acl')}`,
      `\tkdc_listen = 127.0.0.1:${port}`,
      `\tkdc_tcp_listen = 127.0.0.1:${port}`,
      '\tmax_life = 1h',
      '}',
    ],
    logging: [`kdc = FILE:${join(dir, 'kdc.log')}`, `default = FILE:${join(dir, 'krb5lib.log')}`],
  });
}

/** Waits for `krb5kdc -n` to say "starting..." (it has bound its sockets by then), or fails. */
function waitForKdc(child: ChildProcess, logFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => done(new Error(`krb5kdc did not start within 10 s:\n${output}`)), 10_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('starting...')) done();
    };
    const onExit = (code: number | null) => {
      let log = '';
      try {
        log = readFileSync(logFile, 'utf8');
      } catch {
        // no log written yet: the output says why
      }
      done(new Error(`krb5kdc exited (${code}) before it started:\n${output}${log}`));
    };
    function done(error?: Error) {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    }
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}

/**
 * Creates a realm in a temporary folder and starts its KDC on 127.0.0.1; `stop()` it when done
 * (`after(() => kdc.stop())`). Takes about a tenth of a second.
 */
export async function startKdc(options: KdcOptions = {}): Promise<Kdc> {
  const realm = options.realm ?? TEST_REALM;
  assert.match(realm, /^[A-Z0-9.-]+$/, 'a test realm name is upper-case letters, digits, dots and dashes');
  const dir = mkdtempSync(join(tmpdir(), 'hubgate-kdc-'));
  const port = await freeKdcPort();
  const realmConf: RealmConf = { realm, dir, port, trusting: new Map() };
  const keytab = join(dir, 'keytab');
  const logFile = join(dir, 'kdc.log');
  const env: KerberosEnv = {
    KRB5_CONFIG: join(dir, 'krb5.conf'),
    KRB5_KDC_PROFILE: join(dir, 'kdc.conf'),
    KRB5_KTNAME: `FILE:${keytab}`,
    KRB5CCNAME: `FILE:${join(dir, 'ccache')}`,
    KRB5RCACHEDIR: dir,
    ...(options.trace ? { KRB5_TRACE: join(dir, 'trace.log') } : {}),
  };
  writeFileSync(env.KRB5_CONFIG, krb5Conf(realmConf));
  writeFileSync(env.KRB5_KDC_PROFILE, kdcConf(realmConf));
  writeFileSync(join(dir, 'kadm5.acl'), '');

  let child: ChildProcess | undefined;
  const killOnExit = () => child?.kill('SIGKILL');
  const passwords = new Map<string, string>();

  const kadmin = async (query: string): Promise<string> => {
    const { stdout, stderr } = await run(tool('kadmin.local'), ['-r', realm, '-q', query], env);
    // kadmin.local exits 0 even when the query failed: its complaints on stderr are the only sign.
    const complaints = stderr
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('No policy specified for'));
    if (complaints.length > 0) assert.fail(`kadmin.local -q "${query}": ${complaints.join('; ')}`);
    return stdout;
  };

  const addPrincipal = async (
    name: string,
    principalOptions: { password?: string; keytab?: string } = {},
  ) => {
    assert.match(name, PLAIN_WORD, `a principal name is one plain word: ${name}`);
    const { password } = principalOptions;
    if (password !== undefined) {
      assert.match(password, PLAIN_WORD, 'a test password is one plain word (kadmin.local splits its query)');
      await kadmin(`addprinc -pw ${password} ${name}`);
      passwords.set(name, password);
    } else {
      await kadmin(`addprinc -randkey ${name}`);
    }
    const target =
      principalOptions.keytab ?? (password === undefined && name.includes('/') ? keytab : undefined);
    // -norandkey: the key stays what it is (plain ktadd would make a new one, and a password useless).
    if (target) await kadmin(`ktadd -norandkey -k ${target} ${name}`);
  };

  const stop = async () => {
    process.off('exit', killOnExit);
    const kdc = child;
    child = undefined;
    if (kdc && kdc.exitCode === null && kdc.signalCode === null) {
      const exited = new Promise<void>((resolve) => kdc.once('exit', () => resolve()));
      kdc.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await run(tool('kdb5_util'), ['create', '-s', '-r', realm, '-P', randomPassword()], env);
    for (const service of options.services ?? ['HTTP/localhost']) await addPrincipal(service);
    for (const [user, password] of Object.entries(options.users ?? {}))
      await addPrincipal(user, { password });

    child = spawn(tool('krb5kdc'), ['-n', '-r', realm], {
      env: commandEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // A test process that dies without stop() must not leave a KDC behind.
    process.once('exit', killOnExit);
    await waitForKdc(child, logFile);
    // The KDC keeps writing to its pipes; nothing reads them from here on.
    child.stdout?.resume();
    child.stderr?.resume();
  } catch (error) {
    await stop();
    throw error;
  }

  const kdc: Kdc = {
    realm,
    dir,
    port,
    keytab,
    logFile,
    env,
    kadmin,
    addPrincipal,
    async kinit(user, password) {
      const secret = password ?? passwords.get(user);
      assert.ok(secret !== undefined, `no password known for ${user}: pass one to kinit`);
      const principal = user.includes('@') ? user : `${user}@${realm}`;
      const ccache = join(dir, `ccache-${principal.replace(/[^A-Za-z0-9.@-]/g, '_')}`);
      const userEnv: KerberosEnv = { ...env, KRB5CCNAME: `FILE:${ccache}` };
      await run(tool('kinit'), [principal], userEnv, `${secret}\n`);
      return { principal, ccache, env: userEnv };
    },
    async trust(other) {
      const otherConf = realmConfs.get(other);
      assert.ok(otherConf, 'trust() takes a realm made by startKdc');
      const password = randomPassword();
      const crossTgt = `krbtgt/${realm}@${other.realm}`;
      await kadmin(`addprinc -pw ${password} ${crossTgt}`);
      await other.kadmin(`addprinc -pw ${password} ${crossTgt}`);
      otherConf.trusting.set(realm, port);
      writeFileSync(other.env.KRB5_CONFIG, krb5Conf(otherConf));
    },
    stop,
  };
  realmConfs.set(kdc, realmConf);
  return kdc;
}

/**
 * The part of the `kerberos` module (mongodb-js/kerberos) the tests use, typed as it behaves: `username`
 * and `response` are null until a step produced them. Declared here rather than imported because the
 * module is an optional dependency: type checking must pass on a machine where its build failed.
 */
export interface KerberosServer {
  /** `name@REALM` of the client, after a successful step. */
  readonly username: string | null;
  /** The token for the client (base64; for SPNEGO a NegTokenResp carrying the AP-REP), or null. */
  readonly response: string | null;
  /** Only when the server was initialised with '' (any principal in the keytab): the one used. */
  readonly targetName: string | null;
  readonly contextComplete: boolean;
  step(token: string): Promise<string | null>;
}

export interface KerberosClient {
  readonly username: string | null;
  readonly response: string | null;
  readonly contextComplete: boolean;
  step(challenge: string): Promise<string | null>;
}

export interface KerberosModule {
  initializeServer(service: string): Promise<KerberosServer>;
  initializeClient(
    service: string,
    options?: { mechOID?: number; gssFlag?: number },
  ): Promise<KerberosClient>;
  GSS_MECH_OID_SPNEGO: number;
  GSS_MECH_OID_KRB5: number;
  GSS_C_NO_OID: number;
}

// A specifier TypeScript does not resolve: the module may be absent (see KerberosModule).
const KERBEROS_MODULE: string = 'kerberos';

/** Loads the `kerberos` module (its native part initialises here; no variable is read until a call). */
export async function loadKerberos(): Promise<KerberosModule> {
  try {
    return (await import(KERBEROS_MODULE)) as KerberosModule;
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    assert.fail(`the kerberos module does not load (${message}): ${INSTALL_HINT}`);
  }
}

/**
 * Copies a realm's environment (or a user's, after `kinit`) into this process's, for the `kerberos`
 * module, which reads it through the MIT library; returns a function that puts the old values back.
 */
export function useKerberosEnv(env: KerberosEnv): () => void {
  const names = [
    'KRB5_CONFIG',
    'KRB5_KDC_PROFILE',
    'KRB5_KTNAME',
    'KRB5CCNAME',
    'KRB5RCACHEDIR',
    'KRB5_TRACE',
  ] as const;
  const saved = names.map((name) => [name, process.env[name]] as const);
  for (const name of names) {
    const value = env[name];
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  return () => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

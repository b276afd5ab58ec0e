import { spawn, spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  cpSync,
  linkSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Builds hubgate's image as CI does, where no registry is reachable (docs/operators/container.md#how-ci-builds-it):
// the Containerfile's two base images are replaced by local stand-ins, a Debian bookworm root file system
// from debootstrap and the same with this checkout's Node 24 and npm, each made once and kept by its tag.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MIRROR = process.env.HUBGATE_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';

/**
 * The runtime podman runs containers with here, and the limits it must ask for: rootful podman from Debian
 * sets a file limit above this machine's hard limit unless told one, and runc then refuses to start.
 */
const RUNTIME = ['--runtime', 'runc'];
const LIMITS = ['--ulimit', 'nofile=20000:20000', '--ulimit', 'nproc=32768:32768'];

export const BASE_TAG = 'localhost/hubgate-base:bookworm';

/** The tools the container test needs that this machine lacks (none: it can run). */
export function missingContainerTools(): string[] {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin'].filter(Boolean);
  const found = (name: string) =>
    dirs.some((dir) => {
      try {
        accessSync(join(dir, name), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
  return ['podman', 'runc', 'debootstrap'].filter((name) => !found(name));
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `podman …` with the runtime this machine needs; answers its output, and fails on a non-zero exit unless told. */
export async function podman(
  args: string[],
  options: { check?: boolean; input?: string } = {},
): Promise<Run> {
  const result = await run('podman', [...RUNTIME, ...args], options.input);
  if (options.check !== false && result.code !== 0) {
    throw new Error(`podman ${args.join(' ')} exited ${result.code}:\n${result.stderr.slice(-4000)}`);
  }
  return result;
}

function run(command: string, args: string[], input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    // A command that reads no input may have exited before its stdin is closed: EPIPE then says only
    // that (CI saw it once, on a `podman` that had already ended); its exit code says the rest.
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.stdin.end(input ?? '');
  });
}

const imageExists = async (tag: string) =>
  (await podman(['image', 'exists', tag], { check: false })).code === 0;

/** The Debian root file system, as minimal as debian:bookworm-slim: no package lists, caches or manuals. */
async function makeBase(): Promise<void> {
  const work = mkdtempSync('/var/tmp/hubgate-base-');
  try {
    const rootfs = join(work, 'rootfs');
    const boot = await run('debootstrap', ['--variant=minbase', 'bookworm', rootfs, MIRROR]);
    if (boot.code !== 0) throw new Error(`debootstrap exited ${boot.code}:\n${boot.stdout.slice(-3000)}`);
    for (const dir of [
      'var/cache/apt',
      'var/lib/apt/lists',
      'usr/share/doc',
      'usr/share/man',
      'usr/share/info',
      'usr/share/locale',
    ]) {
      rmSync(join(rootfs, dir), { recursive: true, force: true });
    }
    const tarball = join(work, 'rootfs.tar');
    const tar = await run('tar', ['-C', rootfs, '-cf', tarball, '.']);
    if (tar.code !== 0) throw new Error(`tar exited ${tar.code}: ${tar.stderr}`);
    const path = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
    await podman(['import', '--change', `ENV ${path}`, tarball, BASE_TAG]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Where the npm on PATH lives (its package folder), and its version. */
function localNpm(): { dir: string; version: string } {
  const which = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();
  const dir = join(realpathSync(which), '..', '..');
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  if (pkg.name !== 'npm') throw new Error(`${which} is not npm's own bin (${dir})`);
  return { dir, version: pkg.version };
}

/** The build stage's stand-in: the base with this checkout's Node 24 (node_modules/node) and the local npm. */
async function makeBuildImage(tag: string, npmDir: string): Promise<void> {
  const work = mkdtempSync('/var/tmp/hubgate-build-image-');
  try {
    const node = realpathSync(join(ROOT, 'node_modules', 'node', 'bin', 'node'));
    try {
      linkSync(node, join(work, 'node'));
    } catch {
      cpSync(node, join(work, 'node'));
    }
    cpSync(npmDir, join(work, 'npm'), { recursive: true });
    // The machine may reach the registry through a proxy that signs with its own authority: the build
    // stage trusts what this machine trusts. Only the build stand-in carries it, never the image.
    const authorities = process.env.NODE_EXTRA_CA_CERTS;
    if (authorities) cpSync(authorities, join(work, 'ca.crt'));
    const trust = authorities
      ? [
          'COPY ca.crt /usr/local/share/hubgate-build/ca.crt',
          'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/hubgate-build/ca.crt',
        ]
      : [];
    writeFileSync(
      join(work, 'Containerfile'),
      [
        `FROM ${BASE_TAG}`,
        ...trust,
        'COPY node /usr/local/bin/node',
        'COPY npm /usr/local/lib/node_modules/npm',
        'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm' +
          ' && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx && node --version && npm --version',
        '',
      ].join('\n'),
    );
    await podman(['build', '--pull=never', ...LIMITS, '-t', tag, work]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export interface StandIns {
  base: string;
  build: string;
}

/** The two stand-in bases, made unless an earlier run left them under their tags. */
export async function ensureStandIns(): Promise<StandIns> {
  const npm = localNpm();
  const nodeVersion = JSON.parse(
    readFileSync(join(ROOT, 'node_modules', 'node', 'package.json'), 'utf8'),
  ) as {
    version: string;
  };
  const build = `localhost/hubgate-build:node${nodeVersion.version}-npm${npm.version}`;
  if (!(await imageExists(BASE_TAG))) await makeBase();
  if (!(await imageExists(build))) await makeBuildImage(build, npm.dir);
  return { base: BASE_TAG, build };
}

/**
 * Builds the Containerfile of this checkout on the stand-ins, never pulling; the build container uses the
 * host's network so that `npm ci` reaches the npm registry. `--format docker` keeps the HEALTHCHECK.
 */
export async function buildImage(tag: string, standIns: StandIns): Promise<Run> {
  return podman([
    'build',
    '--pull=never',
    '--network=host',
    '--format=docker',
    ...LIMITS,
    '--build-arg',
    `BASE_IMAGE=${standIns.base}`,
    '--build-arg',
    `BUILD_IMAGE=${standIns.build}`,
    '-t',
    tag,
    ROOT,
  ]);
}

/** `podman run` options every container of the test needs: this machine's runtime limits, the host's network. */
export const RUN_OPTIONS = [...LIMITS, '--network=host', '--pull=never'];

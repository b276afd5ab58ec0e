import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';

export class DataDirInUseError extends Error {}

const LOCK_FILE = 'hubgate.lock';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else; it still holds the directory.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Data directories this process holds: a lock file with our own PID may be a dead process's. */
const heldHere = new Set<string>();

/**
 * PGlite has no lock of its own, and two processes (or two threads: the database runs on one of its
 * own, embedded-thread.ts) writing one data directory corrupt it. The lock file holds the owner's PID;
 * a lock whose owner is gone (a crash, kill -9) is taken over, also when the new process has the same
 * PID (a container's process is PID 1 every time), unless this process holds it already.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, LOCK_FILE);
  const key = resolve(path);
  if (heldHere.has(key)) {
    throw new DataDirInUseError(`the data directory ${resolve(dataDir)} is already open in this process`);
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      heldHere.add(key);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        heldHere.delete(key);
        rmSync(path, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
      if (Number.isInteger(owner) && owner !== process.pid && isAlive(owner)) {
        throw new DataDirInUseError(
          `the data directory ${resolve(dataDir)} is in use by another hubgate process (pid ${owner}); stop it first, or use DATABASE_URL to share a PostgreSQL database`,
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new DataDirInUseError(`could not lock the data directory ${resolve(dataDir)}`);
}

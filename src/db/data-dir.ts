import { closeSync, constants, fchmodSync, fstatSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Group and other get nothing: 0700 directories, 0600 files. */
const OWNER_ONLY_UMASK = 0o077;

/**
 * docs/api/limits.md: DATA_DIR and everything in it are readable by the owner only. PGlite creates its
 * files itself, as PostgreSQL does, with the process umask; so the umask of a process that holds an
 * embedded data directory is 077 from now on, for the files the database creates while it runs. What
 * is already there (a directory an older version created, or one copied in with `cp -r`) is tightened
 * once, here. Call it while holding the directory's lock, so that nothing else changes it meanwhile.
 */
export function restrictDataDir(dataDir: string): void {
  process.umask(OWNER_ONLY_UMASK);
  // DATA_DIR itself may be a link the operator made; nothing inside it is followed.
  tighten(dataDir, 0);
}

function tighten(path: string, noFollow: number = constants.O_NOFOLLOW): void {
  // O_NOFOLLOW: a link planted in the directory is never followed to change a file elsewhere, and a
  // path cannot be swapped for a link between a check and the chmod, since the mode is set on the fd.
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | noFollow | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') return;
    throw error;
  }
  let isDirectory: boolean;
  try {
    const stat = fstatSync(fd);
    isDirectory = stat.isDirectory();
    if (stat.mode & OWNER_ONLY_UMASK) fchmodSync(fd, stat.mode & 0o7700);
  } finally {
    closeSync(fd);
  }
  if (isDirectory) for (const name of readdirSync(path)) tighten(join(path, name));
}

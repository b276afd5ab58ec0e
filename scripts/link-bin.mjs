#!/usr/bin/env node
// npm links the bins of dependencies into node_modules/.bin, never the project's own. Linking ours
// there makes `npx hubgate …` run this checkout's CLI (docs/operators/deployment.md) instead of looking in the registry.
import { chmodSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const binDir = join(root, 'node_modules', '.bin');
const link = join(binDir, 'hubgate');
chmodSync(join(root, 'dist', 'main.js'), 0o755);
mkdirSync(binDir, { recursive: true });
rmSync(link, { force: true });
symlinkSync('../../dist/main.js', link);

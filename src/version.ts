import { readFileSync } from 'node:fs';

// Read at import from the package itself, so `src/` under tsx and `dist/` report the same version.
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export const VERSION: string = pkg.version;

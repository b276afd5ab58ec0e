#!/usr/bin/env node
import { holdStartupSignals } from './cli/startup-signals.js';

// A stop during the start must not be lost (src/cli/startup-signals.ts): the first thing the process does.
const command = process.argv[2];
holdStartupSignals(command, command === 'serve' || command === 'worker' ? 0 : 1);

// The entry point checks the runtime before anything else loads: dependencies such as undici 8
// crash at import on an older Node, and a stack trace from one of them would not say what is wrong.
const MINIMUM_NODE_MAJOR = 22;

const major = Number(process.versions.node.split('.')[0]);
if (major < MINIMUM_NODE_MAJOR) {
  process.stderr.write(
    `hubgate: Node ${process.versions.node} is too old; hubgate needs Node ${MINIMUM_NODE_MAJOR} or newer (npm scripts and npx use the Node 24 that npm ci installs)\n`,
  );
  process.exit(1);
}
const { main } = await import('./cli/run.js');
main(process.argv.slice(2));

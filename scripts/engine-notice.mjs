// npm checks every package's `engines` against the Node that runs npm itself, not the Node the project
// runs on: on a machine whose Node is older than 22, `npm ci` opens with some thirty EBADENGINE warning
// blocks, the first thing a newcomer reads, though hubgate installs and runs on its own Node 24 (the
// `node` package). npm has no setting to check engines against another Node, so `prepare` says it in
// one line (scripts/build-if-stale.mjs).

/** The Node version npm ran on, from the user agent npm gives its scripts (`npm/11.1.0 node/v20.20.2 linux x64 …`). */
export function npmNodeVersion(userAgent) {
  return /\bnode\/v(\d+\.\d+\.\d+)\b/.exec(userAgent ?? '')?.[1];
}

/**
 * The one line that explains the warnings, or undefined when npm ran on a Node the dependencies accept.
 * `minimumMajor` is the oldest major every dependency accepts; `runtime` the Node the project runs on.
 */
export function engineNotice(userAgent, runtime, minimumMajor = 22) {
  const npmNode = npmNodeVersion(userAgent);
  if (npmNode === undefined || Number(npmNode.split('.')[0]) >= minimumMajor) return undefined;
  return (
    `hubgate: the EBADENGINE warnings above are expected: npm ran on Node ${npmNode}, but hubgate installed ` +
    `and runs on its own Node ${runtime} (node_modules/node), which npm scripts and npx use`
  );
}

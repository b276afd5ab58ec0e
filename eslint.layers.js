// Which way imports may run inside src/. Each entry is a layer, lowest first; a module may import its own
// folder and anything in a lower layer, never a sibling in its layer or anything above it. Root files
// (src/*.ts) are placed by name. `no-restricted-imports` enforces it per folder, so a climb back up fails lint.
export const LAYERS = [
  ['version.ts', 'deadline.ts'],
  ['outbound/'],
  ['config/'],
  ['telemetry/'],
  ['config.ts', 'logger.ts', 'periodic.ts'],
  ['crypto/'],
  ['db/'],
  ['http/'],
  ['context.ts'],
  ['access/'],
  ['usage/', 'quotas/'],
  ['tenants/', 'keys/', 'platform/', 'event-types/'],
  ['connections/'],
  ['delivery/', 'oauth/'],
  ['people/'],
  ['hub/', 'sign-in/', 'sources/'],
  ['passkeys/', 'sso/', 'setup/', 'portal/', 'mcp-oauth/'],
  ['web/', 'mcp/'],
  ['app.ts'],
  ['cli/'],
  ['main.ts'],
];

const ROUTE_FILES = ['src/**/routes.ts', 'src/**/*-routes.ts'];
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The import specifier of `entry` (a folder or a root file) as written from a folder (`../`) or a root file (`./`). */
function specifier(entry, fromRoot) {
  const up = fromRoot ? '\\./' : '(\\.\\./)+';
  return entry.endsWith('/') ? `^${up}${escape(entry)}` : `^${up}${escape(entry.replace(/\.ts$/, '.js'))}$`;
}

function forbidden(layerIndex, own, fromRoot) {
  const above = LAYERS.slice(layerIndex + 1).flat();
  const siblings = LAYERS[layerIndex].filter((e) => e !== own);
  return [...siblings, ...above].map((entry) => ({
    regex: specifier(entry, fromRoot),
    message: `${own} may not import ${entry}: imports run down the layers in eslint.layers.js (docs/contributors/architecture.md).`,
  }));
}

const NO_ROUTE_TO_ROUTE = {
  regex: '(^|/)([a-z-]+-)?routes\\.js$',
  message:
    'a route file does not import another route file: move what they share into a module both can use.',
};

/** One config block per folder and root file: the patterns it may not import; route files also no routes. */
export function layerRules() {
  return LAYERS.flatMap((layer, i) =>
    layer.flatMap((entry) => {
      const fromRoot = !entry.endsWith('/');
      const files = fromRoot ? [`src/${entry}`] : [`src/${entry}**/*.ts`];
      const patterns = forbidden(i, entry, fromRoot);
      const rule = (extra) => ({ 'no-restricted-imports': ['error', { patterns: [...patterns, ...extra] }] });
      if (fromRoot) return [{ files, rules: rule([]) }];
      return [
        { files, ignores: ROUTE_FILES, rules: rule([]) },
        {
          files: ROUTE_FILES.map((g) => g.replace('src/**/', `src/${entry}**/`)),
          rules: rule([NO_ROUTE_TO_ROUTE]),
        },
      ];
    }),
  );
}

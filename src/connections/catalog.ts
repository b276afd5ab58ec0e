import { readdir } from 'node:fs/promises';
import type { TObject } from 'typebox';
import { ConfigError } from '../config.js';
import type { ConnectorDefinition } from './connector.js';

export interface ConnectorCatalog {
  /** Every connector, by key: the files', then each family's. */
  readonly all: readonly ConnectorDefinition[];
  get(key: string): ConnectorDefinition | undefined;
  /** False when the platform switched the connector off (CONNECTORS_DISABLED). */
  isEnabled(key: string): boolean;
  /**
   * Like `get`, but a family reads its members again first when it does not know the key: another
   * process may have added it since.
   */
  resolve(key: string): Promise<ConnectorDefinition | undefined>;
  /** Like `get`, but a family's key is always read again first (changed or removed elsewhere). */
  current(key: string): Promise<ConnectorDefinition | undefined>;
  /** Every family reads its members again (what lists the catalog does this first). */
  refreshFamilies(): Promise<void>;
  /** Adds connectors made at run time (docs/api/oauth.md); before the routes are registered. */
  addFamily(family: ConnectorFamily): void;
  readonly families: readonly ConnectorFamily[];
}

/**
 * Connectors the platform defines at run time rather than in files (an OAuth2 provider each,
 * docs/api/oauth.md): every key of a family starts with its `prefix`. The catalog answers at once,
 * so a family keeps its members in memory; `refresh` reads them again.
 */
export interface ConnectorFamily {
  readonly prefix: string;
  /** The create body of any member: `connectorKey` (a pattern) and the config fields. */
  readonly createBody: TObject;
  members(): readonly ConnectorDefinition[];
  refresh(): Promise<void>;
}

const DEFINITIONS = new URL('./definitions/', import.meta.url);
const KEY = /^[a-z0-9_]{1,40}$/;

/**
 * Every file in `definitions/` is one connector, found at start-up: adding a connector is adding a
 * file. The same code reads `.ts` under tsx and `.js` in `dist/`.
 */
export async function loadConnectorCatalog(disabled: readonly string[]): Promise<ConnectorCatalog> {
  const files = (await readdir(DEFINITIONS))
    .filter((name) => /\.(ts|js)$/.test(name) && !name.endsWith('.d.ts'))
    .sort();
  const byKey = new Map<string, ConnectorDefinition>();
  for (const file of files) {
    const module = (await import(new URL(file, DEFINITIONS).href)) as { default?: ConnectorDefinition };
    const definition = module.default;
    if (!definition || !KEY.test(definition.key)) {
      throw new Error(`connector definition ${file} has no default export with a valid key`);
    }
    if (byKey.has(definition.key)) throw new Error(`connector ${definition.key} is defined twice`);
    byKey.set(definition.key, definition);
  }
  for (const key of disabled) {
    if (!byKey.has(key)) {
      throw new ConfigError(
        `invalid CONNECTORS_DISABLED: unknown connector ${JSON.stringify(key)}; known: ${[...byKey.keys()].join(', ')}`,
      );
    }
  }
  const fromFiles = [...byKey.values()].sort((a, b) => a.key.localeCompare(b.key));
  const off = new Set(disabled);
  const families: ConnectorFamily[] = [];
  const familyOf = (key: string) => families.find((family) => key.startsWith(family.prefix));
  const member = (key: string) =>
    familyOf(key)
      ?.members()
      .find((definition) => definition.key === key);
  const get = (key: string) => byKey.get(key) ?? member(key);
  return {
    get all() {
      return families.length === 0 ? fromFiles : [...fromFiles, ...families.flatMap((f) => f.members())];
    },
    get,
    isEnabled: (key) => (byKey.has(key) ? !off.has(key) : member(key) !== undefined),
    async resolve(key) {
      const family = byKey.has(key) ? undefined : familyOf(key);
      if (family && !member(key)) await family.refresh();
      return get(key);
    },
    async current(key) {
      const family = byKey.has(key) ? undefined : familyOf(key);
      if (family) await family.refresh();
      return get(key);
    },
    async refreshFamilies() {
      await Promise.all(families.map((family) => family.refresh()));
    },
    addFamily: (family) => families.push(family),
    families,
  };
}

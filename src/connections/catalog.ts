import { readdir } from 'node:fs/promises';
import { ConfigError } from '../config.js';
import type { ConnectorDefinition } from './connector.js';

export interface ConnectorCatalog {
  /** Every connector, by key. */
  readonly all: readonly ConnectorDefinition[];
  get(key: string): ConnectorDefinition | undefined;
  /** False when the platform switched the connector off (CONNECTORS_DISABLED). */
  isEnabled(key: string): boolean;
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
  const all = [...byKey.values()].sort((a, b) => a.key.localeCompare(b.key));
  const off = new Set(disabled);
  return { all, get: (key) => byKey.get(key), isEnabled: (key) => byKey.has(key) && !off.has(key) };
}

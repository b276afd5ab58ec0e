// A connector's config fields between the form (text in inputs) and the API (strings, lists, numbers),
// for creating a connection and for editing one (contract §6, §15).
import type { Connection, Connector } from '../api-types.js';
import { splitList, type CatalogField } from '../components/ConnectionField.js';

/** A field typed as a number: an integer in the catalog, or the throttle (§15). */
export const isNumeric = (field: Pick<CatalogField, 'name' | 'type'>): boolean =>
  field.type === 'integer' || field.type === 'number' || field.name === 'maxPerSecond';

/** A config value as a form shows it: lists joined by commas, nothing as ''. */
export function textOf(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(String).join(', ');
  return String(value);
}

/** What was typed, as the API takes it; undefined when an optional field is left empty. */
export function valueOf(field: CatalogField, text: string): unknown {
  const trimmed = text.trim();
  if (field.type === 'array') {
    const items = splitList(trimmed);
    return items.length > 0 ? items : undefined;
  }
  if (trimmed === '') return field.required ? '' : undefined;
  if (isNumeric(field) && /^-?\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  return trimmed;
}

/** The form's starting values for a connection: each config field as text. */
export const valuesOf = (connector: Connector, connection: Connection): Record<string, string> =>
  Object.fromEntries(connector.configFields.map((f) => [f.name, textOf(connection.config[f.name])]));

/**
 * The PATCH body: only what changed. A field emptied that had a value is sent as null (back to its
 * default: every event type, no throttle).
 */
export function changesOf(
  connector: Connector,
  connection: Connection,
  displayName: string,
  values: Record<string, string>,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (displayName.trim() !== connection.displayName) body.displayName = displayName.trim();
  for (const field of connector.configFields) {
    const before = connection.config[field.name];
    const after = valueOf(field, values[field.name] ?? '');
    if (JSON.stringify(after ?? null) === JSON.stringify(before ?? null)) continue;
    body[field.name] = after === undefined ? null : after;
  }
  return body;
}

/** The host of a URL, or null when it is not one yet. */
export function hostOf(url: unknown): string | null {
  if (typeof url !== 'string') return null;
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

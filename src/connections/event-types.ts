import { Type } from 'typebox';

/** An event type as publishers send it (contract §7). */
export const EVENT_TYPE_PATTERN = '^[a-z0-9_.-]{1,100}$';

/**
 * `eventTypes` of a connection: patterns where `*` stands for any run of characters, so
 * `employee.*` takes `employee.created` and `employee.contract.signed`, and `*` takes everything.
 * Absent means every type.
 */
export const EventTypePatterns = Type.Array(
  Type.String({ pattern: '^[a-z0-9_.*-]{1,100}$', description: 'an event type, `*` matching any run' }),
  { minItems: 1, maxItems: 50, uniqueItems: true, description: 'patterns such as employee.*; default all' },
);

export function eventTypeMatches(patterns: readonly string[] | undefined, type: string): boolean {
  if (!patterns) return true;
  return patterns.some((pattern) => {
    const source = pattern.split('*').map((part) => part.replace(/[.-]/g, '\\$&'));
    return new RegExp(`^${source.join('.*')}$`).test(type);
  });
}

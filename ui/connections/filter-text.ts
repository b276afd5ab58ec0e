// A payload filter's text (docs/api/connections.md) as the filter editor reads and shows it, and the API's
// refusals of one in words: plain functions, apart from the editor's component so that unit tests load them.
import type { ApiError } from '../common/api.js';

/** What was typed, as the API takes it: nothing when empty, the parsed JSON, else the text (refused). */
export function filterValueOf(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A filter as the text area shows it. */
export const filterTextOf = (value: unknown): string =>
  value === null || value === undefined ? '' : JSON.stringify(value, null, 2);

/** Why typed text is not JSON, said before anything is sent; undefined when it is (or is empty). */
export function jsonProblem(text: string, what: string): string | undefined {
  if (text.trim() === '') return undefined;
  try {
    JSON.parse(text);
    return undefined;
  } catch {
    return `The ${what} is not valid JSON. Check quotes, commas and braces.`;
  }
}

/** The API's refusals of a filter (JSON Pointers, `/filter/data.tier/gtt`), one line each. */
export function filterErrorText(error: ApiError | undefined): string | undefined {
  const found = error?.fieldErrors.filter((e) => e.path === 'filter' || e.path.startsWith('/filter'));
  if (!found || found.length === 0) return undefined;
  return found
    .map((e) => (e.path === 'filter' ? `The filter ${e.message}.` : `${e.path}: ${e.message}.`))
    .join(' ');
}

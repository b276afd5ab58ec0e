// The channel form's texts as the API takes them, and what is wrong with them, in words.
import type { ApiError } from '../../api.js';
import {
  DESTINATION_FORBIDDEN_HINT,
  fieldProblem,
  KIND_FIELDS,
  textOf,
  valueOf,
  type Channel,
  type ChannelFieldSpec,
  type ChannelKind,
} from './ChannelKinds.js';

export const CHANNEL_NAME_MAX = 200;

/** What is typed in each config field, by field name. */
export type Texts = Record<string, string>;

/** The texts a form starts with: a channel's values (never its secrets), or empty. */
export function initialTexts(kind: ChannelKind, channel: Channel | undefined): Texts {
  const texts: Texts = {};
  for (const spec of KIND_FIELDS[kind]) {
    texts[spec.name] = spec.secret ? '' : textOf(spec, channel?.config[spec.name]);
  }
  return texts;
}

/** The `config` to send: removed fields null, empty ones left out (or emptied), the rest typed. */
export function channelConfig(
  specs: ChannelFieldSpec[],
  texts: Texts,
  removed: Set<string>,
  channel: Channel | undefined,
): Record<string, unknown> {
  const editing = channel !== undefined;
  const config: Record<string, unknown> = {};
  for (const spec of specs) {
    const text = texts[spec.name] ?? '';
    if (removed.has(spec.name)) {
      config[spec.name] = null;
      continue;
    }
    if (!text.trim()) {
      // Empty: a secret on edit is kept (left out), an optional field is left out on create and
      // removed on edit when it had a value.
      if (spec.secret && editing) continue;
      if (spec.type === 'list') config[spec.name] = [];
      else if (!spec.required && editing && channel?.config[spec.name] !== undefined)
        config[spec.name] = null;
      continue;
    }
    config[spec.name] = valueOf(spec, text);
  }
  return config;
}

/** The API's message for a config field, when it named one. */
const apiFieldError = (error: ApiError | undefined, name: string): string | undefined =>
  error?.forField(`config.${name}`);

/**
 * What is wrong with each field (found before sending, once `checked`, or named by the API), and
 * the refusal that names none of the form's fields.
 */
export function channelFormErrors(
  specs: ChannelFieldSpec[],
  state: { name: string; texts: Texts; removed: Set<string>; checked: boolean; editing: boolean },
  apiError: ApiError | undefined,
) {
  const { name, texts, removed, checked, editing } = state;
  const forbidden = apiError?.code === 'destination_forbidden';
  const nameError =
    (checked && !name.trim() ? 'Enter a name.' : undefined) ??
    (apiError?.forField('name') ? `Use 1 to ${CHANNEL_NAME_MAX} characters.` : undefined);
  const errors = Object.fromEntries(
    specs.map((spec) => {
      const local =
        checked && !removed.has(spec.name) ? fieldProblem(spec, texts[spec.name] ?? '', editing) : undefined;
      const remote = apiFieldError(apiError, spec.name);
      return [
        spec.name,
        local ?? (remote ? (forbidden ? `${remote}. ${DESTINATION_FORBIDDEN_HINT}` : remote) : undefined),
      ];
    }),
  );
  const placed = apiError?.fieldErrors.some(
    (e) =>
      e.path === 'name' ||
      specs.some((spec) => e.path === `config.${spec.name}` || e.path.startsWith(`config.${spec.name}.`)),
  );
  const otherError = apiError && !placed ? apiError : undefined;
  return { forbidden, nameError, errors, otherError };
}

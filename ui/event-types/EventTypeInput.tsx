// A connection's `eventTypes` field with the catalog's names offered (docs/api/events.md): the field
// holds patterns separated by commas, so each suggestion is the text typed so far with one name in
// place of the last, unfinished pattern, and a browser's own list completes it.
import { useId, useMemo } from 'preact/hooks';
import { api } from '../common/api.js';
import { useResource } from '../common/hooks.js';
import { routes } from '../common/routes.js';

/** The first 100 names of the catalog; none if it cannot be read (the field works without them). */
function useCatalogNames(): string[] {
  const names = useResource(async (signal) => {
    const page = await api(routes.eventTypes.list, { query: { limit: 100 }, signal });
    return page.data.filter((type) => !type.deprecated).map((type) => type.name);
  }, 'event-type-names');
  return names.data ?? [];
}

/** What the connection form gives each text field (ui/connections/fields.tsx). */
interface TextProps {
  id: string;
  name: string;
  'aria-describedby'?: string;
  'aria-invalid'?: boolean;
  class?: string;
  required?: boolean;
  value: string;
  autoComplete?: string;
  spellcheck?: boolean;
  onInput: (event: { currentTarget: HTMLInputElement }) => void;
}

export function EventTypeInput(props: TextProps) {
  const listId = useId();
  const names = useCatalogNames();
  const { value } = props;
  const suggestions = useMemo(() => {
    const cut = value.lastIndexOf(',');
    const before = cut < 0 ? '' : `${value.slice(0, cut + 1)} `;
    const typing = value.slice(cut + 1).trim();
    const chosen = new Set(value.split(',').map((part: string) => part.trim()));
    return names.filter((name) => name.startsWith(typing) && !chosen.has(name)).map((name) => before + name);
  }, [names, value]);
  return (
    <>
      <input {...props} type="text" list={listId} placeholder="employee.*, invoice.paid" />
      <datalist id={listId}>
        {suggestions.map((suggestion) => (
          <option key={suggestion} value={suggestion} />
        ))}
      </datalist>
    </>
  );
}

import type { Connector } from '../api-types.js';
import { ConnectionField, fieldErrorText, splitList } from './ConnectionField.js';
import { DisplayNameField } from './DisplayNameField.js';
import type { NewConnection } from './useNewConnection.js';

/** The fields of the chosen connector, after the display name every connection has. */
export function NewConnectionFields({ chosen, state }: { chosen: Connector; state: NewConnection }) {
  const { create, values } = state;
  const eventTypes = splitList(values.eventTypes ?? '');
  return (
    <>
      <DisplayNameField value={state.displayName} onInput={state.setDisplayName} error={create.error} />
      {chosen.configFields.map((field) => (
        <ConnectionField
          key={`${chosen.connectorKey}-${field.name}`}
          field={field}
          value={values[field.name] ?? ''}
          error={fieldErrorText(create.error, field.name, field.type === 'array' ? eventTypes : undefined)}
          onInput={(value) => state.setValue(field.name, value)}
        />
      ))}
    </>
  );
}

import type { Connector } from '../api-types.js';
import { ConnectionField, fieldErrorText } from './ConnectionField.js';
import { CredentialsGeneratedChoice } from './CredentialsGeneratedChoice.js';
import type { CredentialsBinding } from './useCredentialsBinding.js';

/** The connector's credential fields: a generated one offers "generate" or "use my own". */
export function CredentialsFields({
  connector,
  binding,
}: {
  connector: Connector;
  binding: CredentialsBinding;
}) {
  const { values, own, bind } = binding;
  return (
    <>
      {connector.credentialFields.map((field) => {
        const setValue = (value: string) => binding.setValue(field.name, value);
        const error = fieldErrorText(bind.error, field.name);
        return field.generated ? (
          <CredentialsGeneratedChoice
            key={field.name}
            field={field}
            own={Boolean(own[field.name])}
            onOwn={(choice) => binding.setOwn(field.name, choice)}
            value={values[field.name] ?? ''}
            onInput={setValue}
            error={error}
          />
        ) : (
          <ConnectionField
            key={field.name}
            field={field}
            value={values[field.name] ?? ''}
            onInput={setValue}
            error={error}
            secret={field.name === 'headerValue'}
          />
        );
      })}
    </>
  );
}

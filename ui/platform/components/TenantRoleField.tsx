import { Field } from '../../components/Field.js';
import { roleName } from '../../format.js';
import { ROLES } from './PlatformTypes.js';

/** A new user's role in the tenant. */
export function TenantRoleField({
  value,
  onChange,
  error,
}: {
  value: string;
  onChange: (role: string) => void;
  error: string | undefined;
}) {
  return (
    <Field label="Role" error={error}>
      {({ id, describedBy, invalid }) => (
        <select
          id={id}
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          onChange={(event) => onChange(event.currentTarget.value)}
        >
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {roleName(r)}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

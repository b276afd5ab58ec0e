import { EXPIRY_RANGE_MESSAGE, expiryProblem } from './keyExpiry.js';
import type { KeyCreate } from './useKeyCreate.js';

export const KEY_NAME_MAX = 100;

/**
 * What is wrong with each field of the create-key form: found before sending (once submitted) or
 * named by the API; `other` is a refusal that names no field.
 */
export function keyCreateErrors({ checked, name, scopes, expiry, submit }: KeyCreate) {
  const apiError = submit.error;
  const nameError =
    (checked && !name.trim() ? 'Enter a name.' : undefined) ??
    (apiError?.forField('name') ? `Use 1 to ${KEY_NAME_MAX} characters.` : undefined);
  const scopesError =
    (checked && scopes.size === 0 ? 'Choose at least one scope.' : undefined) ??
    (apiError?.forField('scopes') ? 'Choose scopes from the list.' : undefined) ??
    (apiError?.code === 'entitlement_missing' ? apiError.message : undefined);
  const expiryError =
    (checked ? expiryProblem(expiry) : undefined) ??
    (apiError?.forField('expiresAt') ? EXPIRY_RANGE_MESSAGE : undefined);
  const otherError =
    apiError && apiError.fieldErrors.length === 0 && apiError.code !== 'entitlement_missing'
      ? apiError
      : undefined;
  return { nameError, scopesError, expiryError, otherError };
}

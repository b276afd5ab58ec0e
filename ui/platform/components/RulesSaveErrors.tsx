import type { ApiError } from '../../api.js';

/** Why the rules were not saved: the server's refusal (its fields not on the page listed), or the browser's check. */
export function RulesSaveErrors({
  serverErrors,
  checked,
  problems,
}: {
  serverErrors: ApiError | undefined;
  checked: boolean;
  problems: Map<string, string>;
}) {
  const placed = (path: string) => path.startsWith('rules.') || path.startsWith('defaults.');
  const unplaced = serverErrors?.fieldErrors.filter((e) => !placed(e.path)) ?? [];
  return (
    <>
      {serverErrors ? (
        <div class="notice notice-error" role="alert">
          <strong>The rules were not saved.</strong> {serverErrors.message}
          {unplaced.length > 0 ? (
            <ul>
              {unplaced.map((e) => (
                <li key={e.path}>
                  <code>{e.path}</code>: {e.message}
                </li>
              ))}
            </ul>
          ) : (
            ' The problem is shown on its field below.'
          )}
        </div>
      ) : null}
      {checked && problems.size > 0 ? (
        <div class="notice notice-error" role="alert">
          <strong>Not saved yet:</strong>{' '}
          {problems.size === 1 ? 'one field needs' : `${problems.size} fields need`} attention, shown below.
        </div>
      ) : null}
    </>
  );
}

import { useLocation } from 'preact-iso';
import { useEffect, useRef } from 'preact/hooks';
import type { Connection } from '../api-types.js';
import { api, ApiError, withQuery } from '../api.js';
import type { ConnectionDialog } from './ConnectionRowActions.js';

/**
 * Just created (`?bind=<id>`): open its credentials dialog, and take the parameter out of the URL so
 * a reload or the back button does not open it again. Taking it out changes `bindId`: the request
 * is not abandoned for that, only its answer ignored once the page is gone.
 */
export function useBindFromUrl(
  bindId: string | undefined,
  cursor: string | null,
  canOperate: boolean,
  open: (dialog: ConnectionDialog) => void,
  fail: (error: ApiError | undefined) => void,
) {
  const { route } = useLocation();
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  useEffect(() => {
    if (!bindId) return;
    route(withQuery('/connections', { cursor }), true);
    if (!canOperate) return;
    api<Connection>('GET', `/api/v1/integrations/connections/${encodeURIComponent(bindId)}`)
      .then((connection) => {
        if (mounted.current && connection.status !== 'disabled') {
          open({ kind: 'bind', connection, justCreated: true });
        }
      })
      .catch((error: unknown) => {
        if (mounted.current) fail(error instanceof ApiError ? error : undefined);
      });
  }, [bindId]);
}

import type { RefObject } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { ApiError } from '../api.js';

/**
 * Where the focus goes in the credentials dialog (`body` holds its content): the new secret takes
 * it (and is selected, ready to copy); a refusal focuses its field; the warning takes it on its safe
 * choice, and going back puts it on the copy button.
 */
export function useCredentialsFocus(
  body: RefObject<HTMLDivElement | null>,
  secrets: Record<string, string> | null,
  error: ApiError | undefined,
  confirming: boolean,
) {
  useEffect(() => {
    if (secrets) body.current?.querySelector<HTMLElement>('.secret-value')?.focus();
  }, [secrets]);
  useEffect(() => {
    if (error) body.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [error]);
  const warned = useRef(false);
  useEffect(() => {
    if (confirming) body.current?.querySelector<HTMLElement>('.confirm-inline .button-primary')?.focus();
    else if (warned.current) body.current?.querySelector<HTMLElement>('.secret-row .button')?.focus();
    warned.current = confirming;
  }, [confirming]);
}

/**
 * A browser may close the dialog itself (a second Escape with no click between): keep up with it.
 * `inside` is an element of the dialog.
 */
export function useDialogClosed(inside: RefObject<HTMLElement | null>, onClose: () => void) {
  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    const dialog = inside.current?.closest('dialog');
    let mounted = true;
    const closed = () => {
      if (mounted) close.current();
    };
    dialog?.addEventListener('close', closed);
    return () => {
      mounted = false;
      dialog?.removeEventListener('close', closed);
    };
  }, []);
}

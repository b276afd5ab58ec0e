// Dialogs on the browser's own <dialog>: the modal itself, a form's Cancel and submit buttons, and
// "are you sure?".
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

/**
 * A modal on the browser's own `<dialog>`: focus is kept inside it and Escape asks to close it.
 * `onCancel` decides what Escape does (a dialog holding a secret asks first).
 */
export function Dialog({
  title,
  onClose,
  onCancel,
  children,
  wide,
}: {
  title: string;
  onClose: () => void;
  onCancel?: () => void;
  children: ComponentChildren;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const mounted = useRef(true);
  const ask = useRef(onCancel ?? onClose);
  ask.current = onCancel ?? onClose;
  useEffect(() => {
    const dialog = ref.current;
    // Focus goes back where it was when the dialog opened (the button that opened it), if that is
    // still on the page; otherwise the page decides (a message that says what happened).
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    mounted.current = true;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      mounted.current = false;
      dialog?.close();
      if (opener?.isConnected && document.activeElement === document.body) opener.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class={wide ? 'dialog dialog-wide' : 'dialog'}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        (onCancel ?? onClose)();
      }}
      onClose={(event) => {
        // Chrome lets a page refuse Escape only once per user gesture: a second Escape in a row
        // closes the dialog anyway. While this component still shows it, it is opened again and
        // asked as for Escape, so a dialog holding a secret never vanishes without its question.
        if (!mounted.current) return;
        event.currentTarget.showModal();
        ask.current();
      }}
    >
      <h2 id={titleId} class="dialog-title">
        {title}
      </h2>
      {children}
    </dialog>
  );
}

/**
 * The foot of a dialog's form: Cancel, and the submit button that says what it does and, while it
 * runs, that it is running. Cancel is off meanwhile, unless leaving is how to stop it (`cancelWhileBusy`).
 */
export function FormActions({
  busy,
  onCancel,
  label,
  busyLabel,
  cancelWhileBusy = false,
}: {
  busy: boolean;
  onCancel: () => void;
  label: string;
  busyLabel: string;
  cancelWhileBusy?: boolean;
}) {
  return (
    <div class="dialog-actions">
      <button type="button" class="button" onClick={onCancel} disabled={busy && !cancelWhileBusy}>
        Cancel
      </button>
      <button type="submit" class="button button-primary" disabled={busy} aria-busy={busy}>
        {busy ? busyLabel : label}
      </button>
    </div>
  );
}

/** "Are you sure?", naming what is about to change. */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  busy,
  danger,
  onConfirm,
  onClose,
  error,
}: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  busy?: boolean;
  danger?: boolean;
  onConfirm: () => void;
  onClose: () => void;
  error?: ComponentChildren;
}) {
  return (
    <Dialog title={title} onClose={onClose}>
      <div class="dialog-body">{children}</div>
      {error}
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose} disabled={busy}>
          Cancel
        </button>
        <button
          type="button"
          class={danger ? 'button button-danger' : 'button button-primary'}
          onClick={onConfirm}
          disabled={busy}
          aria-busy={busy}
        >
          {busy ? 'Working…' : confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}

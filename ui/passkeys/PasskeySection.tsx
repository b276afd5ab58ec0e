// The profile's passkeys (docs/api/passkeys.md, docs/operators/web-ui.md): the list (synced or device-bound,
// added, last used), remove with a confirmation that warns about the last one, and the password sign-in
// switch.
import type { ComponentChildren, Ref } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError } from '../common/api.js';
import { ConfirmDialog } from '../common/Dialog.js';
import { Time } from '../common/format.js';
import { useAction, useResource, type Resource } from '../common/hooks.js';
import { DoneNotice, ErrorNotice, Loading, Notice, useDoneNotice, type Done } from '../common/Notice.js';
import { routes, type Passkey } from '../common/routes.js';
import { listPasskeys, passkeysSupported, signalAcceptedPasskeys } from './ceremonies.js';
import { PasskeyAddDialog } from './PasskeyAddDialog.js';
import { PasskeyIcon } from './PasskeyIcon.js';
import { PasswordSignInCard } from './PasswordSignInCard.js';

/** Where a passkey lives, from the flags its authenticator reported (docs/api/passkeys.md). */
function kindOf(passkey: Passkey): { label: string; tone: string } {
  if (passkey.backedUp) return { label: 'Synced', tone: 'badge badge-good' };
  if (!passkey.backupEligible) return { label: 'Device-bound', tone: 'badge' };
  return { label: 'Can sync', tone: 'badge' };
}

/** The signed-in person's passkeys, newest first, each with its "Remove". */
function PasskeyList({ passkeys, onRemove }: { passkeys: Passkey[]; onRemove: (passkey: Passkey) => void }) {
  return (
    <>
      <ul class="passkey-list" aria-label="Your passkeys">
        {passkeys.map((passkey) => {
          const kind = kindOf(passkey);
          return (
            <li key={passkey.id} class="passkey">
              <span class="passkey-mark" aria-hidden="true">
                <PasskeyIcon size={20} />
              </span>
              <div class="passkey-text">
                <p class="passkey-title">
                  <span class="passkey-name">{passkey.name}</span>
                  <span class={kind.tone}>{kind.label}</span>
                </p>
                <p class="passkey-meta">
                  Added <Time at={passkey.createdAt} />,{' '}
                  <span class="passkey-used">
                    last used {passkey.lastUsedAt ? <Time at={passkey.lastUsedAt} /> : 'never'}
                  </span>
                </p>
              </div>
              <button
                type="button"
                class="button button-small button-danger-quiet"
                onClick={() => onRemove(passkey)}
              >
                Remove<span class="visually-hidden"> {passkey.name}</span>
              </button>
            </li>
          );
        })}
      </ul>
      <p class="passkey-legend">
        <strong>Synced</strong>: your password manager keeps it on your other devices too.{' '}
        <strong>Can sync</strong>: it may be copied to them later. <strong>Device-bound</strong>: it never
        leaves the one device or security key it was made on.
      </p>
    </>
  );
}

/** The person's passkeys: failed, loading, none yet, or the list with a remove button each. */
function PasskeyListBody({
  passkeys,
  onRemove,
}: {
  passkeys: Resource<Passkey[]>;
  onRemove: (passkey: Passkey) => void;
}) {
  const list = passkeys.data;
  if (passkeys.error)
    return <ErrorNotice error={passkeys.error} title="Your passkeys could not be loaded." />;
  if (!list) return <Loading what="Loading your passkeys" />;
  if (list.length === 0) {
    return (
      <p class="passkey-none">
        You have no passkey yet. Add one to sign in without typing a password, on this device or any device
        your password manager syncs to.
      </p>
    );
  }
  return <PasskeyList passkeys={list} onRemove={onRemove} />;
}

/**
 * Removing a passkey (docs/api/passkeys.md), after a confirmation that names it. The last passkey of an
 * account whose password sign-in is off stays: the server refuses (409), and this says why first.
 */
function PasskeyRemoveDialog({
  passkey,
  lastWithoutPassword,
  onClose,
  onRemoved,
}: {
  passkey: Passkey;
  /** It is the only passkey and password sign-in is off, as far as this page knows. */
  lastWithoutPassword: boolean;
  onClose: () => void;
  onRemoved: () => void;
}) {
  const remove = useAction(async () => {
    try {
      await api(routes.passkeys.remove, { params: { id: passkey.id } });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.code === 'conflict') {
        throw new ApiError(
          error.status,
          error.code,
          `hubgate kept “${passkey.name}”: it is your last passkey and password sign-in is off, so without it you could not sign in at all. Turn password sign-in on, or add another passkey, first.`,
          [],
          error.requestId,
        );
      }
      // Removed meanwhile (another tab): what the person wanted is done.
      if (error.code !== 'not_found') throw error;
    }
    void signalAcceptedPasskeys(passkey);
    onRemoved();
    onClose();
  });
  return (
    <ConfirmDialog
      title={`Remove “${passkey.name}”?`}
      confirmLabel="Remove passkey"
      danger
      busy={remove.busy}
      onConfirm={() => void remove.run()}
      onClose={onClose}
      error={<ErrorNotice error={remove.error} />}
    >
      <p>
        hubgate refuses this passkey from now on. It stays on your device or in your password manager until
        you delete it there.
      </p>
      {lastWithoutPassword ? (
        <Notice tone="warning">
          This is your only passkey and password sign-in is off: hubgate will not remove it, or you could not
          sign in at all. Turn password sign-in on first, or add another passkey.
        </Notice>
      ) : null}
    </ConfirmDialog>
  );
}

/** A dialog the passkeys card opens: add a passkey, or remove one. */
type PasskeyDialog = { kind: 'add' } | { kind: 'remove'; passkey: Passkey } | null;

/** The dialog open over the profile's passkeys, if any. */
function PasskeyDialogs({
  open,
  lastWithoutPassword,
  onChanged,
  onDone,
  onClose,
}: {
  open: PasskeyDialog;
  /** Removing this passkey would leave no way in: password sign-in is off and it is the only one. */
  lastWithoutPassword: boolean;
  /** The list is out of date. */
  onChanged: () => void;
  /** What happened, for the card to say. */
  onDone: (message: string) => void;
  onClose: () => void;
}) {
  return (
    <>
      {open?.kind === 'add' ? (
        <PasskeyAddDialog
          onClose={onClose}
          onAdded={(passkey) => {
            onDone(`“${passkey.name}” is added: you can sign in with it from now on.`);
            onChanged();
          }}
        />
      ) : null}
      {open?.kind === 'remove' ? (
        <PasskeyRemoveDialog
          passkey={open.passkey}
          lastWithoutPassword={lastWithoutPassword}
          onClose={onClose}
          onRemoved={() => {
            onDone(`“${open.passkey.name}” is removed: hubgate refuses it from now on.`);
            onChanged();
          }}
        />
      ) : null}
    </>
  );
}

/**
 * The passkeys card: its Add button (off where the browser cannot), what passkeys are, the news, the list.
 */
function PasskeysCard({
  supported,
  onAdd,
  done,
  doneNotice,
  onDismiss,
  children,
}: {
  supported: boolean;
  onAdd: () => void;
  done: Done | null;
  doneNotice: Ref<HTMLParagraphElement>;
  onDismiss: () => void;
  children: ComponentChildren;
}) {
  return (
    <section class="card" aria-labelledby="passkeys-title">
      <div class="card-head">
        <h2 id="passkeys-title">Passkeys</h2>
        <button
          type="button"
          class="button button-primary"
          disabled={!supported}
          aria-describedby={supported ? undefined : 'passkeys-unsupported'}
          onClick={onAdd}
        >
          Add a passkey
        </button>
      </div>
      <p class="passkey-intro">
        A passkey signs you in with your fingerprint, face, screen lock or security key instead of a password.
        It works only on hubgate, so it cannot be phished or leaked.
      </p>
      {supported ? null : (
        <p class="field-hint" id="passkeys-unsupported">
          This browser cannot create passkeys. Use one that supports them to add a passkey.
        </p>
      )}
      <DoneNotice done={done} noticeRef={doneNotice} onDismiss={onDismiss} extraClass="passkey-done" />
      {children}
    </section>
  );
}

/**
 * The profile's passkeys (add, remove) and the password sign-in switch (docs/api/passkeys.md,
 * docs/operators/web-ui.md).
 */
export function PasskeySection() {
  const supported = passkeysSupported();
  const passkeys = useResource((signal) => listPasskeys(signal), 'passkeys');
  const password = useResource(
    (signal) => api(routes.passkeys.passwordSignIn, { signal }),
    'password-sign-in',
  );
  // The switch's answer is the news until the next load.
  const [passwordEnabled, setPasswordEnabled] = useState<boolean | null>(null);
  const [open, setOpen] = useState<PasskeyDialog>(null);
  // After an addition or a removal the news takes the focus: the button that opened the dialog
  // may be gone (a removed passkey's). A dialog cancelled gives it back to its button.
  const { done, setDone, ref: doneNotice, dismiss } = useDoneNotice();

  const list = passkeys.data;
  const enabled = passwordEnabled ?? password.data?.enabled;
  const openDialog = (next: PasskeyDialog) => {
    setDone(null);
    setOpen(next);
  };
  return (
    <>
      <PasskeysCard
        supported={supported}
        onAdd={() => openDialog({ kind: 'add' })}
        done={done}
        doneNotice={doneNotice}
        onDismiss={dismiss}
      >
        <PasskeyListBody
          passkeys={passkeys}
          onRemove={(passkey) => openDialog({ kind: 'remove', passkey })}
        />
      </PasskeysCard>
      <PasswordSignInCard
        error={password.error}
        enabled={enabled}
        passkeyCount={list?.length}
        onChanged={(state) => setPasswordEnabled(state.enabled)}
      />
      <PasskeyDialogs
        open={open}
        lastWithoutPassword={enabled === false && list?.length === 1}
        onChanged={passkeys.reload}
        onDone={setDone}
        onClose={() => setOpen(null)}
      />
    </>
  );
}

import { overlapText } from '../format.js';
import { fieldLabel } from './ConnectionField.js';
import { CredentialsLeaveWarning } from './CredentialsLeaveWarning.js';
import { Notice } from './Notice.js';
import { SecretOnce } from './SecretOnce.js';

/** What a generated secret is for, said under it. */
function secretUse(name: string, overlapSeconds: number) {
  if (name !== 'signingSecret') return null;
  return (
    <p>
      Give it to the receiver: it checks the <code>webhook-signature</code> header of each delivery with it
      (Standard Webhooks).
      {overlapSeconds > 0
        ? ` The previous secret keeps working for ${overlapText(overlapSeconds)}, so each delivery carries both signatures until then.`
        : ''}
    </p>
  );
}

/** The secrets hubgate generated for a binding, each shown once, and how the dialog is left. */
export function CredentialsSecrets({
  name,
  secrets,
  overlapSeconds,
  confirming,
  onCopied,
  onBack,
  onLeave,
  onClose,
}: {
  name: string;
  secrets: Record<string, string>;
  /** How long the previous secret keeps working: 0 for a first binding. */
  overlapSeconds: number;
  confirming: boolean;
  onCopied: (key: string) => void;
  onBack: () => void;
  onLeave: () => void;
  onClose: () => void;
}) {
  return (
    <>
      <div class="dialog-body stack">
        <Notice tone="success">Credentials bound: “{name}” delivers events from now on.</Notice>
        {Object.entries(secrets).map(([key, secret]) => (
          <div key={key} class="stack-tight credentials-secret">
            <SecretOnce
              label={fieldLabel(key)}
              secret={secret}
              kept="encrypted"
              onCopied={() => onCopied(key)}
            />
            {secretUse(key, overlapSeconds)}
          </div>
        ))}
      </div>
      {confirming ? (
        <CredentialsLeaveWarning onBack={onBack} onClose={onClose} />
      ) : (
        <div class="dialog-actions">
          <button type="button" class="button button-primary" onClick={onLeave}>
            Done
          </button>
        </div>
      )}
    </>
  );
}

import type { ApiError } from '../../api.js';
import { StatusBadge } from '../../components/StatusBadge.js';
import { Time } from '../../components/Time.js';
import { ChannelButtons } from './ChannelButtons.js';
import {
  KIND_FIELDS,
  KIND_NAMES,
  type Channel,
  type ChannelAttempt,
  type TestResult,
} from './ChannelKinds.js';

/** "Send test" on one channel: running, its answer, or why it could not be asked. */
export type TestState =
  { busy: true } | { busy: false; result: TestResult } | { busy: false; error: ApiError };

/** An answer's status in words: HTTP for the web kinds, the SMTP reply for e-mail. */
function statusWords(channel: Channel, status: number | null): string {
  if (status === null) return 'no answer';
  return channel.kind === 'EMAIL' ? `SMTP ${status}` : `HTTP ${status}`;
}

function TestOutcome({ channel, state }: { channel: Channel; state: TestState | undefined }) {
  // The region is always there, so a screen reader announces what appears in it.
  let text = null;
  if (state?.busy) {
    text = (
      <span class="channel-test-busy">
        <span class="spinner" aria-hidden="true" />
        Sending a test notification…
      </span>
    );
  } else if (state && 'error' in state) {
    text = <span class="channel-test-bad">The test could not be sent: {state.error.message}</span>;
  } else if (state) {
    const { result } = state;
    text = result.ok ? (
      <span class="channel-test-ok">
        Test delivered: {channel.name} answered {statusWords(channel, result.responseStatus)}.
      </span>
    ) : (
      <span class="channel-test-bad">
        Test failed ({statusWords(channel, result.responseStatus)}): {result.error ?? 'no reason given'}.
      </span>
    );
  }
  return (
    <p class="channel-test" role="status" aria-label={`Test of ${channel.name}`}>
      {text}
    </p>
  );
}

function LastAttempt({ channel, attempt }: { channel: Channel; attempt: ChannelAttempt | null }) {
  if (attempt === null) return <span class="muted">Never sent</span>;
  return (
    <span class="channel-attempt">
      <StatusBadge status={attempt.ok ? 'delivered' : 'failed'} label={attempt.ok ? 'Delivered' : 'Failed'} />{' '}
      <Time at={attempt.at} />
      <span class="channel-attempt-detail">
        {attempt.test ? 'Test, ' : ''}
        {statusWords(channel, attempt.responseStatus)}
        {attempt.error ? `: ${attempt.error}` : ''}
      </span>
    </span>
  );
}

/** The fields that are not secret, shown as set; the secret ones only as "set" or "not set". */
function Settings({ channel }: { channel: Channel }) {
  return (
    <dl class="channel-settings">
      {KIND_FIELDS[channel.kind].map((spec) => {
        const value = channel.config[spec.name];
        let shown;
        if (spec.secret) {
          shown = channel.secretFields.includes(spec.name) ? (
            <span class="channel-secret-set">set</span>
          ) : (
            <span class="muted">not set</span>
          );
        } else if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) {
          shown = <span class="muted">{spec.type === 'method' ? 'POST' : '—'}</span>;
        } else {
          shown = <bdi class="mono">{Array.isArray(value) ? value.join(', ') : String(value)}</bdi>;
        }
        return (
          <div key={spec.name}>
            <dt>{spec.label}</dt>
            <dd>{shown}</dd>
          </div>
        );
      })}
      {channel.kind === 'WEBHOOK' ? (
        <div>
          <dt>Signing secret</dt>
          <dd>
            {channel.secretFields.includes('signingSecret') ? (
              <span class="channel-secret-set">set</span>
            ) : (
              <span class="muted">not set</span>
            )}
          </dd>
        </div>
      ) : null}
    </dl>
  );
}

/** One channel: name and kind, its settings, enabled or not, its last delivery, and the actions on it. */
export function ChannelRow({
  channel,
  test,
  toggling,
  onTest,
  onToggle,
  onEdit,
  onDelete,
}: {
  channel: Channel;
  test: TestState | undefined;
  toggling: ReadonlySet<string>;
  onTest: (channel: Channel) => void;
  onToggle: (channel: Channel) => void;
  onEdit: (channel: Channel) => void;
  onDelete: (channel: Channel) => void;
}) {
  return (
    <tr>
      <th scope="row">
        <bdi class="channel-name">{channel.name}</bdi>
        <span class="channel-kind-label">{KIND_NAMES[channel.kind]}</span>
        <span class="channel-updated">
          Updated <Time at={channel.updatedAt} />
        </span>
      </th>
      <td>
        <Settings channel={channel} />
      </td>
      <td>
        <StatusBadge
          status={channel.enabled ? 'active' : 'disabled'}
          label={channel.enabled ? 'Enabled' : 'Disabled'}
        />
      </td>
      <td>
        <LastAttempt channel={channel} attempt={channel.lastAttempt} />
      </td>
      <td class="actions channel-actions">
        <ChannelButtons
          channel={channel}
          testing={test?.busy}
          toggling={toggling.has(channel.id)}
          onTest={onTest}
          onToggle={onToggle}
          onEdit={onEdit}
          onDelete={onDelete}
        />
        <TestOutcome channel={channel} state={test} />
      </td>
    </tr>
  );
}

import type { ApiError } from '../../api.js';
import { StatusBadge } from '../../components/StatusBadge.js';
import { Time } from '../../components/Time.js';
import {
  type Channel,
  type ChannelAttempt,
  KIND_FIELDS,
  KIND_NAMES,
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

/** The alerting channels, with what each sends to and the actions on it. */
export function ChannelTable({
  channels,
  tests,
  toggling,
  onTest,
  onToggle,
  onEdit,
  onDelete,
}: {
  channels: Channel[];
  tests: ReadonlyMap<string, TestState>;
  toggling: ReadonlySet<string>;
  onTest: (channel: Channel) => void;
  onToggle: (channel: Channel) => void;
  onEdit: (channel: Channel) => void;
  onDelete: (channel: Channel) => void;
}) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="Alerting channels">
      <table class="channel-table">
        <caption class="visually-hidden">Alerting channels, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Channel</th>
            <th scope="col">Settings</th>
            <th scope="col">Status</th>
            <th scope="col">Last delivery</th>
            <th scope="col" class="actions">
              Actions
            </th>
          </tr>
        </thead>
        <tbody>
          {channels.map((channel) => {
            const test = tests.get(channel.id);
            return (
              <tr key={channel.id}>
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
                  <div class="channel-buttons">
                    <button
                      type="button"
                      class="button button-small"
                      disabled={test?.busy}
                      aria-busy={test?.busy}
                      onClick={() => onTest(channel)}
                    >
                      Send test<span class="visually-hidden"> to {channel.name}</span>
                    </button>
                    <button
                      type="button"
                      class="button button-small"
                      aria-busy={toggling.has(channel.id)}
                      onClick={() => onToggle(channel)}
                    >
                      {channel.enabled ? 'Disable' : 'Enable'}
                      <span class="visually-hidden"> {channel.name}</span>
                    </button>
                    <button type="button" class="button button-small" onClick={() => onEdit(channel)}>
                      Edit<span class="visually-hidden"> {channel.name}</span>
                    </button>
                    <button
                      type="button"
                      class="button button-small button-danger-quiet"
                      onClick={() => onDelete(channel)}
                    >
                      Delete<span class="visually-hidden"> {channel.name}</span>
                    </button>
                  </div>
                  <TestOutcome channel={channel} state={test} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

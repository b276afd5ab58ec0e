import { useState } from 'preact/hooks';
import { ApiError } from '../../api.js';
import { platformApi } from '../key.js';
import { channelPath, type Channel, type TestResult } from './ChannelKinds.js';
import type { TestState } from './ChannelRow.js';

const asApiError = (reason: unknown): ApiError =>
  reason instanceof ApiError ? reason : new ApiError(0, 'unknown', String(reason));

/**
 * A channel's actions in the list: a test (its answer kept per channel) and enable/disable (one
 * at a time per channel). `reload` brings the list up to date; `say` tells what changed.
 */
export function useChannelActions(reload: () => void, say: (news: string) => void) {
  const [tests, setTests] = useState<Map<string, TestState>>(() => new Map());
  const [toggling, setToggling] = useState<Set<string>>(() => new Set());
  const [toggleError, setToggleError] = useState<ApiError | undefined>(undefined);
  const setTest = (id: string, state: TestState) => setTests((previous) => new Map(previous).set(id, state));

  async function sendTest(channel: Channel) {
    setTest(channel.id, { busy: true });
    try {
      const result = await platformApi<TestResult>('POST', `${channelPath(channel.id)}/test`, { body: {} });
      setTest(channel.id, { busy: false, result });
      reload();
    } catch (reason) {
      setTest(channel.id, { busy: false, error: asApiError(reason) });
    }
  }

  async function toggle(channel: Channel) {
    if (toggling.has(channel.id)) return;
    setToggling((previous) => new Set(previous).add(channel.id));
    setToggleError(undefined);
    try {
      await platformApi<Channel>('PATCH', channelPath(channel.id), { body: { enabled: !channel.enabled } });
      say(`“${channel.name}” is ${channel.enabled ? 'disabled: no alert is sent to it' : 'enabled'}.`);
      reload();
    } catch (reason) {
      setToggleError(asApiError(reason));
    } finally {
      setToggling((previous) => {
        const next = new Set(previous);
        next.delete(channel.id);
        return next;
      });
    }
  }
  return { tests, toggling, toggleError, sendTest, toggle };
}

// The alert routing document (docs/operators/alerting.md) as the editor holds it: the server's shape
// type-only, plus a key per rule and matcher so that moving one keeps its inputs (and focus) with it.

import type { Matcher, MatcherOp, RoutingDocument } from '../../common/routes.js';

export const OPS: readonly MatcherOp[] = ['=', '!=', '=~', '!~'];
export const OP_NAMES: Record<MatcherOp, string> = {
  '=': 'equals',
  '!=': 'does not equal',
  '=~': 'matches the pattern',
  '!~': 'does not match the pattern',
};

/** The labels the platform's own alerts carry, with the values it uses. */
export const KNOWN_LABELS: Record<string, readonly string[]> = {
  alertname: ['DeliveryFailed', 'DeliveryFailureRateHigh', 'QueueBacklogHigh', 'DatabaseUnavailable'],
  severity: ['critical', 'warning', 'info'],
  tenantId: [],
};

const MAX_REPEAT_SECONDS = 7 * 24 * 3600;
export const UNITS = [
  { name: 'minutes', seconds: 60 },
  { name: 'hours', seconds: 3600 },
  { name: 'days', seconds: 86400 },
] as const;
export type Unit = (typeof UNITS)[number]['name'];

/** An interval as typed: an amount and a unit. */
export interface Interval {
  amount: string;
  unit: Unit;
}

export interface MatcherDraft extends Matcher {
  key: number;
}

export interface RuleDraft {
  key: number;
  id?: string;
  name: string;
  enabled: boolean;
  matchers: MatcherDraft[];
  channelIds: string[];
  continue: boolean;
  /** null: the defaults' interval. */
  repeat: Interval | null;
}

export interface DocumentDraft {
  defaults: { channelIds: string[]; repeat: Interval };
  rules: RuleDraft[];
}

let nextKey = 1;
const newKey = (): number => nextKey++;

/** Seconds in the largest unit that divides them. */
function intervalOf(seconds: number): Interval {
  for (const unit of [...UNITS].reverse()) {
    if (seconds % unit.seconds === 0) return { amount: String(seconds / unit.seconds), unit: unit.name };
  }
  return { amount: String(Math.max(1, Math.round(seconds / 60))), unit: 'minutes' };
}

function secondsOf(interval: Interval): number {
  const unit = UNITS.find((u) => u.name === interval.unit) ?? UNITS[0];
  const amount = interval.amount.trim();
  return /^\d+$/.test(amount) ? Number(amount) * unit.seconds : Number.NaN;
}

function intervalProblem(interval: Interval): string | undefined {
  const seconds = secondsOf(interval);
  if (!Number.isSafeInteger(seconds) || seconds < 1) return 'Enter a whole number greater than 0.';
  if (seconds > MAX_REPEAT_SECONDS) return 'At most 7 days.';
  return undefined;
}

export const newMatcher = (): MatcherDraft => ({ key: newKey(), name: 'alertname', op: '=', value: '' });

export const newRule = (): RuleDraft => ({
  key: newKey(),
  name: '',
  enabled: true,
  matchers: [newMatcher()],
  channelIds: [],
  continue: false,
  repeat: null,
});

export function draftOf(doc: RoutingDocument): DocumentDraft {
  return {
    defaults: {
      channelIds: [...doc.defaults.channelIds],
      repeat: intervalOf(doc.defaults.repeatIntervalSeconds),
    },
    rules: doc.rules.map((rule) => ({
      key: newKey(),
      id: rule.id,
      name: rule.name,
      enabled: rule.enabled,
      matchers: rule.matchers.map((m) => ({ key: newKey(), name: m.name, op: m.op, value: m.value })),
      channelIds: [...rule.channelIds],
      continue: rule.continue,
      repeat: rule.repeatIntervalSeconds === null ? null : intervalOf(rule.repeatIntervalSeconds),
    })),
  };
}

/** The PUT body. */
export function bodyOf(draft: DocumentDraft) {
  return {
    defaults: {
      channelIds: draft.defaults.channelIds,
      repeatIntervalSeconds: secondsOf(draft.defaults.repeat),
    },
    rules: draft.rules.map((rule) => ({
      ...(rule.id ? { id: rule.id } : {}),
      name: rule.name.trim(),
      enabled: rule.enabled,
      matchers: rule.matchers.map(({ name, op, value }) => ({ name: name.trim(), op, value })),
      channelIds: rule.channelIds,
      continue: rule.continue,
      repeatIntervalSeconds: rule.repeat === null ? null : secondsOf(rule.repeat),
    })),
  };
}

/** The same document, as the server would store it: for "unsaved changes" and the conflict view. */
export const sameDocument = (a: DocumentDraft, b: DocumentDraft): boolean =>
  JSON.stringify(bodyOf(a)) === JSON.stringify(bodyOf(b));

const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Problems the browser sees before saving, keyed by the API's field paths (`rules.1.matchers.0.value`). */
export function documentProblems(draft: DocumentDraft): Map<string, string> {
  const problems = new Map<string, string>();
  const repeat = intervalProblem(draft.defaults.repeat);
  if (repeat) problems.set('defaults.repeatIntervalSeconds', repeat);
  draft.rules.forEach((rule, r) => {
    if (!rule.name.trim()) problems.set(`rules.${r}.name`, 'Give the rule a name.');
    if (rule.channelIds.length === 0)
      problems.set(`rules.${r}.channelIds`, 'Choose at least one channel, or the matched alerts go nowhere.');
    if (rule.repeat) {
      const problem = intervalProblem(rule.repeat);
      if (problem) problems.set(`rules.${r}.repeatIntervalSeconds`, problem);
    }
    rule.matchers.forEach((matcher, m) => {
      if (!LABEL_NAME.test(matcher.name.trim()))
        problems.set(
          `rules.${r}.matchers.${m}.name`,
          'A label name is letters, digits and underscores, not starting with a digit.',
        );
      if (matcher.op === '=~' || matcher.op === '!~') {
        try {
          // RE2 (the server's) and JavaScript differ at the edges: leading flags such as (?i) are
          // RE2's only; the server has the last word on the rest.
          new RegExp(`^(?:${matcher.value.replace(/^\(\?[imsU]+\)/, '')})$`);
        } catch {
          problems.set(`rules.${r}.matchers.${m}.value`, 'This is not a valid regular expression.');
        }
      }
    });
  });
  return problems;
}

/** A rule in one line, for the conflict view ("DeliveryFailed → pager, every 1 hour"). */
export function ruleSummary(rule: RuleDraft, channelName: (id: string) => string): string {
  const when =
    rule.matchers.length === 0
      ? 'every alert'
      : rule.matchers.map((m) => `${m.name} ${m.op} "${m.value}"`).join(' and ');
  const to = rule.channelIds.length === 0 ? 'no channel' : rule.channelIds.map(channelName).join(', ');
  const repeat = rule.repeat ? `every ${rule.repeat.amount} ${rule.repeat.unit}` : 'default repeat';
  return `${rule.enabled ? '' : '(off) '}${when} → ${to}; ${repeat}${rule.continue ? '; continue' : ''}`;
}

/** What each of a matcher's three fields is given by the matcher row. */
export interface MatcherFieldProps {
  id: string;
  matcher: MatcherDraft;
  position: string;
  error: string | undefined;
  onChange: (matcher: MatcherDraft) => void;
}

// One routing rule as a card of the rules form: name, enabled, conditions (label, operator, value),
// channels, continue, repeat; and the channel picker and interval the defaults share.
import { useId } from 'preact/hooks';
import type { Channel, MatcherOp } from '../../common/routes.js';
import { KIND_NAMES } from './channels.js';
import {
  KNOWN_LABELS,
  newMatcher,
  OP_NAMES,
  OPS,
  UNITS,
  type Interval,
  type MatcherDraft,
  type MatcherFieldProps,
  type RuleDraft,
  type Unit,
} from './rules.js';

/** A group's hint and error under it, with the ids (`id-hint`, `id-error`) its aria-describedby names. */
function RuleFieldNotes({ id, hint, error }: { id: string; hint?: string; error?: string }) {
  return (
    <>
      {hint ? (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </>
  );
}

/** A repeat interval as an amount and a unit (minutes, hours, days), labelled as a group. */
export function RuleInterval({
  legend,
  value,
  onChange,
  error,
  hint,
}: {
  legend: string;
  value: Interval;
  onChange: (value: Interval) => void;
  error?: string;
  hint?: string;
}) {
  const id = useId();
  const describedBy =
    [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div
      class={error ? 'field rule-interval field-invalid' : 'field rule-interval'}
      role="group"
      aria-labelledby={`${id}-legend`}
    >
      <span class="rule-interval-legend" id={`${id}-legend`}>
        {legend}
      </span>
      <div class="row">
        <label class="visually-hidden" for={`${id}-amount`}>
          {legend}: amount
        </label>
        <input
          id={`${id}-amount`}
          type="text"
          inputMode="numeric"
          class="rule-interval-amount"
          value={value.amount}
          aria-describedby={describedBy}
          aria-invalid={error ? true : undefined}
          onInput={(event) => onChange({ ...value, amount: event.currentTarget.value })}
        />
        <label class="visually-hidden" for={`${id}-unit`}>
          {legend}: unit
        </label>
        <select
          id={`${id}-unit`}
          value={value.unit}
          onChange={(event) => onChange({ ...value, unit: event.currentTarget.value as Unit })}
        >
          {UNITS.map((unit) => (
            <option key={unit.name} value={unit.name}>
              {unit.name}
            </option>
          ))}
        </select>
      </div>
      <RuleFieldNotes id={id} hint={hint} error={error} />
    </div>
  );
}

/** The channels to offer: the list's, then any selected ID the list does not hold. */
function channelOptions(channels: Channel[], selected: string[]) {
  const known = new Set(channels.map((c) => c.id));
  return [
    ...channels.map((c) => ({
      id: c.id,
      label: c.name,
      detail: `${KIND_NAMES[c.kind]}${c.enabled ? '' : ', disabled'}`,
    })),
    ...selected.filter((s) => !known.has(s)).map((s) => ({ id: s, label: s, detail: 'no such channel' })),
  ];
}

/**
 * Channels as checkboxes, from the channel list. An ID the list does not hold (a channel deleted
 * meanwhile) stays shown, so that unticking it is possible.
 */
export function RuleChannelPicker({
  legend,
  channels,
  selected,
  onChange,
  error,
  hint,
}: {
  legend: string;
  channels: Channel[];
  selected: string[];
  onChange: (ids: string[]) => void;
  error?: string;
  hint?: string;
}) {
  const id = useId();
  const options = channelOptions(channels, selected);
  const describedBy =
    [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <fieldset class={error ? 'rule-channels field-invalid' : 'rule-channels'} aria-describedby={describedBy}>
      <legend>{legend}</legend>
      {options.length === 0 ? (
        <p class="muted">
          No channels yet. <a href="/platform/alerting/channels">Add a channel</a> first.
        </p>
      ) : (
        <div class="rule-channel-options">
          {options.map((option) => (
            <label key={option.id} class="check">
              <input
                type="checkbox"
                checked={selected.includes(option.id)}
                aria-invalid={error ? true : undefined}
                onChange={(event) =>
                  onChange(
                    event.currentTarget.checked
                      ? [...selected, option.id]
                      : selected.filter((s) => s !== option.id),
                  )
                }
              />
              <span>
                <bdi>{option.label}</bdi> <span class="muted">({option.detail})</span>
              </span>
            </label>
          ))}
        </div>
      )}
      <RuleFieldNotes id={id} hint={hint} error={error} />
    </fieldset>
  );
}

/** A matcher's label name, with the names the platform's alerts use as suggestions. */
function RuleMatcherName({ id, matcher, position, error, onChange }: MatcherFieldProps) {
  return (
    <div class={error ? 'field field-invalid' : 'field'}>
      <label for={`${id}-name`}>Label</label>
      <input
        id={`${id}-name`}
        type="text"
        list={`${id}-names`}
        autoComplete="off"
        spellcheck={false}
        value={matcher.name}
        aria-label={`${position}: label`}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-name-error` : undefined}
        onInput={(event) => onChange({ ...matcher, name: event.currentTarget.value })}
      />
      <datalist id={`${id}-names`}>
        {Object.keys(KNOWN_LABELS).map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      {error ? (
        <p class="field-error" id={`${id}-name-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** A matcher's test: equal, not equal, matching a pattern or not. */
function RuleMatcherOp({ id, matcher, position, error, onChange }: MatcherFieldProps) {
  return (
    <div class={error ? 'field field-invalid' : 'field'}>
      <label for={`${id}-op`}>Test</label>
      <select
        id={`${id}-op`}
        value={matcher.op}
        aria-label={`${position}: test`}
        aria-invalid={error ? true : undefined}
        onChange={(event) => onChange({ ...matcher, op: event.currentTarget.value as MatcherOp })}
      >
        {OPS.map((op) => (
          <option key={op} value={op}>
            {op} {OP_NAMES[op]}
          </option>
        ))}
      </select>
      {error ? <p class="field-error">{error}</p> : null}
    </div>
  );
}

/** A matcher's value (or pattern, for a regex test), with the known values of its label as suggestions. */
function RuleMatcherValue({ id, matcher, position, error, onChange }: MatcherFieldProps) {
  const values = KNOWN_LABELS[matcher.name.trim()] ?? [];
  const regex = matcher.op === '=~' || matcher.op === '!~';
  return (
    <div class={error ? 'field field-invalid rule-matcher-value' : 'field rule-matcher-value'}>
      <label for={`${id}-value`}>{regex ? 'Pattern' : 'Value'}</label>
      <input
        id={`${id}-value`}
        type="text"
        list={values.length > 0 ? `${id}-values` : undefined}
        autoComplete="off"
        spellcheck={false}
        class={regex ? 'mono' : undefined}
        value={matcher.value}
        aria-label={`${position}: ${regex ? 'pattern' : 'value'}`}
        aria-invalid={error ? true : undefined}
        aria-describedby={`${id}-value-hint${error ? ` ${id}-value-error` : ''}`}
        onInput={(event) => onChange({ ...matcher, value: event.currentTarget.value })}
      />
      {values.length > 0 ? (
        <datalist id={`${id}-values`}>
          {values.map((value) => (
            <option key={value} value={value} />
          ))}
        </datalist>
      ) : null}
      <p class="field-hint" id={`${id}-value-hint`}>
        {regex
          ? 'An RE2 regular expression matched against the whole value, e.g. Delivery.*'
          : 'An alert without this label has the value "" (empty).'}
      </p>
      {error ? (
        <p class="field-error" id={`${id}-value-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

/**
 * One matcher: a label name, an operator and a value, each labelled. The names and values the
 * platform's alerts use are offered as suggestions; any other label can be typed.
 */
function RuleMatcher({
  matcher,
  position,
  onChange,
  onRemove,
  errorAt,
}: {
  matcher: MatcherDraft;
  /** "Condition 2 of rule “pager”", for the controls' names. */
  position: string;
  onChange: (matcher: MatcherDraft) => void;
  onRemove: () => void;
  errorAt: (field: 'name' | 'op' | 'value') => string | undefined;
}) {
  const id = useId();
  return (
    <li class="rule-matcher">
      <RuleMatcherName
        id={id}
        matcher={matcher}
        position={position}
        onChange={onChange}
        error={errorAt('name')}
      />
      <RuleMatcherOp
        id={id}
        matcher={matcher}
        position={position}
        onChange={onChange}
        error={errorAt('op')}
      />
      <RuleMatcherValue
        id={id}
        matcher={matcher}
        position={position}
        onChange={onChange}
        error={errorAt('value')}
      />
      <button
        type="button"
        class="button button-small button-danger-quiet rule-matcher-remove"
        onClick={onRemove}
      >
        Remove<span class="visually-hidden"> {position}</span>
      </button>
    </li>
  );
}

/** The conditions an alert must meet (all of them) for a rule, and a way to add one. */
function RuleMatchers({
  rule,
  title,
  onChange,
  errorAt,
}: {
  rule: RuleDraft;
  /** The rule's heading, to name each condition. */
  title: string;
  onChange: (rule: RuleDraft) => void;
  errorAt: (path: string) => string | undefined;
}) {
  return (
    <fieldset class="rule-matchers">
      <legend>When an alert has</legend>
      {rule.matchers.length === 0 ? (
        <p class="muted">No conditions: this rule matches every alert.</p>
      ) : (
        <ol class="plain-list">
          {rule.matchers.map((matcher, m) => (
            <RuleMatcher
              key={matcher.key}
              matcher={matcher}
              position={`condition ${m + 1} of ${title}`}
              onChange={(next) =>
                onChange({ ...rule, matchers: rule.matchers.map((x, i) => (i === m ? next : x)) })
              }
              onRemove={() => onChange({ ...rule, matchers: rule.matchers.filter((_, i) => i !== m) })}
              errorAt={(field) => errorAt(`matchers.${m}.${field}`)}
            />
          ))}
        </ol>
      )}
      <button
        type="button"
        class="button button-small"
        onClick={() => onChange({ ...rule, matchers: [...rule.matchers, newMatcher()] })}
      >
        Add condition<span class="visually-hidden"> to {title}</span>
      </button>
      {rule.matchers.length > 1 ? <p class="field-hint">Every condition must hold.</p> : null}
    </fieldset>
  );
}

/** Whether the walk through the rules goes on after this one matched. */
function RuleContinue({ rule, onChange }: { rule: RuleDraft; onChange: (rule: RuleDraft) => void }) {
  return (
    <label class="check">
      <input
        type="checkbox"
        checked={rule.continue}
        onChange={(event) => onChange({ ...rule, continue: event.currentTarget.checked })}
      />
      <span>
        Continue with the next rules after this one matched
        <span class="field-hint rule-check-hint">
          Off: the first matching rule decides. On: the alert also goes where later matching rules say.
        </span>
      </span>
    </label>
  );
}

/** How often a rule sends a still-firing alert again: as the defaults say, or its own interval. */
function RuleRepeat({
  rule,
  defaultRepeat,
  onChange,
  error,
}: {
  rule: RuleDraft;
  defaultRepeat: Interval;
  onChange: (rule: RuleDraft) => void;
  error: string | undefined;
}) {
  return (
    <>
      <label class="check">
        <input
          type="checkbox"
          checked={rule.repeat === null}
          onChange={(event) =>
            onChange({ ...rule, repeat: event.currentTarget.checked ? null : { ...defaultRepeat } })
          }
        />
        Repeat as the defaults say ({defaultRepeat.amount} {defaultRepeat.unit})
      </label>
      {rule.repeat ? (
        <RuleInterval
          legend="Repeat interval"
          value={rule.repeat}
          onChange={(repeat) => onChange({ ...rule, repeat })}
          error={error}
          hint="How long before an alert that is still firing is sent again to the same channel."
        />
      ) : null}
    </>
  );
}

/** A rule's heading and the buttons that move it up or down the list, or remove it. */
function RuleCardHead({
  id,
  title,
  index,
  count,
  onMove,
  onRemove,
}: {
  id: string;
  title: string;
  index: number;
  count: number;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
}) {
  return (
    <div class="rule-head">
      <h3 id={`${id}-title`}>{title}</h3>
      <div class="row">
        <button type="button" class="button button-small" disabled={index === 0} onClick={() => onMove(-1)}>
          Move up<span class="visually-hidden"> {title}</span>
        </button>
        <button
          type="button"
          class="button button-small"
          disabled={index === count - 1}
          onClick={() => onMove(1)}
        >
          Move down<span class="visually-hidden"> {title}</span>
        </button>
        <button type="button" class="button button-small button-danger-quiet" onClick={onRemove}>
          Remove<span class="visually-hidden"> {title}</span>
        </button>
      </div>
    </div>
  );
}

/** A rule's name and whether it is on. */
function RuleCardTop({
  id,
  rule,
  nameError,
  onChange,
}: {
  id: string;
  rule: RuleDraft;
  nameError: string | undefined;
  onChange: (rule: RuleDraft) => void;
}) {
  return (
    <div class="rule-top">
      <div class={nameError ? 'field field-invalid' : 'field'}>
        <label for={`${id}-name`}>Name</label>
        <input
          id={`${id}-name`}
          type="text"
          autoComplete="off"
          maxLength={200}
          value={rule.name}
          aria-invalid={nameError ? true : undefined}
          aria-describedby={nameError ? `${id}-name-error` : undefined}
          onInput={(event) => onChange({ ...rule, name: event.currentTarget.value })}
        />
        {nameError ? (
          <p class="field-error" id={`${id}-name-error`}>
            {nameError}
          </p>
        ) : null}
      </div>
      <label class="check">
        <input
          type="checkbox"
          checked={rule.enabled}
          onChange={(event) => onChange({ ...rule, enabled: event.currentTarget.checked })}
        />
        Enabled
      </label>
    </div>
  );
}

/**
 * One routing rule in the editor: its name, on/off, the conditions an alert must meet (all of
 * them), the channels it goes to, whether the walk continues, and its repeat interval.
 */
export function RuleCard({
  rule,
  index,
  count,
  channels,
  defaultRepeat,
  onChange,
  onMove,
  onRemove,
  errorAt,
}: {
  rule: RuleDraft;
  index: number;
  count: number;
  channels: Channel[];
  defaultRepeat: Interval;
  onChange: (rule: RuleDraft) => void;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
  /** The error for a path under this rule (`name`, `matchers.0.value` …). */
  errorAt: (path: string) => string | undefined;
}) {
  const id = useId();
  const title = rule.name.trim() ? `Rule ${index + 1}: ${rule.name.trim()}` : `Rule ${index + 1}`;
  const nameError = errorAt('name');
  const ruleError = errorAt('id') ?? errorAt('matchers');
  return (
    <li
      class={rule.enabled ? 'card rule-card' : 'card rule-card rule-card-off'}
      aria-labelledby={`${id}-title`}
    >
      <RuleCardHead id={id} title={title} index={index} count={count} onMove={onMove} onRemove={onRemove} />
      {ruleError ? <p class="field-error">{ruleError}</p> : null}
      <RuleCardTop id={id} rule={rule} nameError={nameError} onChange={onChange} />
      <RuleMatchers rule={rule} title={title} onChange={onChange} errorAt={errorAt} />
      <RuleChannelPicker
        legend="Send to"
        channels={channels}
        selected={rule.channelIds}
        onChange={(channelIds) => onChange({ ...rule, channelIds })}
        error={errorAt('channelIds')}
      />
      <RuleContinue rule={rule} onChange={onChange} />
      <RuleRepeat
        rule={rule}
        defaultRepeat={defaultRepeat}
        onChange={onChange}
        error={errorAt('repeatIntervalSeconds')}
      />
    </li>
  );
}

import type { Kysely } from 'kysely';
import { recordAudit, type AuditOrigin } from '../../access/audit.js';
import type { AppContext } from '../../context.js';
import { newId } from '../../crypto/ids.js';
import type { DB } from '../../db/schema.js';
import { fieldProblem, HttpProblem, type FieldError } from '../../http/problem.js';
import { compileMatchers, matches, type Matcher } from './matchers.js';
import { findRoutingRow, lockExistingChannelIds, lockRoutingRow, updateRoutingRow } from './rules-store.js';

export type { Matcher, MatcherOp } from './matchers.js';

/** One routing rule as the API shows it and the row stores it (docs/operators/alerting.md). */
export interface RoutingRule {
  id: string;
  name: string;
  enabled: boolean;
  matchers: Matcher[];
  channelIds: string[];
  continue: boolean;
  /** null: the defaults' value. */
  repeatIntervalSeconds: number | null;
}

export interface RoutingDefaults {
  channelIds: string[];
  repeatIntervalSeconds: number;
}

export interface RoutingDocument {
  revision: number;
  defaults: RoutingDefaults;
  rules: RoutingRule[];
}

/** A PUT body once the schema has checked it: the omitted parts take their defaults here. */
export interface RoutingInput {
  defaults: RoutingDefaults;
  rules: Array<{
    id?: string;
    name: string;
    enabled?: boolean;
    matchers: Matcher[];
    channelIds: string[];
    continue?: boolean;
    repeatIntervalSeconds?: number | null;
  }>;
}

/** Alertmanager repeats a firing alert every 4 h by default; hubgate's default is 1 h. */
export const DEFAULT_REPEAT_INTERVAL_SECONDS = 3600;

/** What GET answers before the first PUT: revision 0, no channels, no rules. */
const initialDocument = (): RoutingDocument => ({
  revision: 0,
  defaults: { channelIds: [], repeatIntervalSeconds: DEFAULT_REPEAT_INTERVAL_SECONDS },
  rules: [],
});

/** The current document (the initial one when none was ever written). */
export async function readRoutingDocument(db: Kysely<DB>): Promise<RoutingDocument> {
  const row = await findRoutingRow(db);
  if (!row) return initialDocument();
  // Only replaceRoutingDocument writes the column, always in this shape.
  const stored = row.document as unknown as Omit<RoutingDocument, 'revision'>;
  return { revision: row.revision, defaults: stored.defaults, rules: stored.rules };
}

/**
 * Compiles the document's patterns a slice at a time, so that routing (synchronous, inside the
 * engine's transaction) finds every one ready, also in a process that did not take the PUT. Only the
 * engine needs it: reads for the API and for a channel delete leave patterns to be compiled on use.
 */
export async function prepareRouting(doc: RoutingDocument): Promise<RoutingDocument> {
  await compileMatchers(
    doc.rules.flatMap((rule) => rule.matchers),
    { keepGoing: true },
  );
  return doc;
}

/** Channel IDs any rule or the defaults use (DELETE of a channel in use is 409). */
export function channelIdsInUse(doc: RoutingDocument): Set<string> {
  return new Set([...doc.defaults.channelIds, ...doc.rules.flatMap((rule) => rule.channelIds)]);
}

/**
 * Pure: where an alert with these labels goes. Rules in order; a disabled rule is skipped; a rule
 * matches when every matcher does (a missing label is ""); a match adds its channels with its
 * repeat interval (or the defaults'); without `continue` the walk stops there; when no rule
 * matched, the defaults' channels. One entry per channel, the first match's interval winning.
 */
export function routeAlert(
  labels: Record<string, string>,
  doc: RoutingDocument,
): Array<{ channelId: string; repeatIntervalSeconds: number }> {
  const routes = new Map<string, number>();
  const add = (channelIds: string[], interval: number) => {
    for (const channelId of channelIds) if (!routes.has(channelId)) routes.set(channelId, interval);
  };
  let matched = false;
  for (const rule of doc.rules) {
    if (!rule.enabled || !rule.matchers.every((m) => matches(m, labels))) continue;
    matched = true;
    add(rule.channelIds, rule.repeatIntervalSeconds ?? doc.defaults.repeatIntervalSeconds);
    if (!rule.continue) break;
  }
  if (!matched) add(doc.defaults.channelIds, doc.defaults.repeatIntervalSeconds);
  return [...routes].map(([channelId, repeatIntervalSeconds]) => ({ channelId, repeatIntervalSeconds }));
}

/**
 * The checks a schema cannot make without the database: rule IDs are unique, regexes compile within
 * the document's bounds (the first refused only: one is enough, and compiling the rest costs).
 */
async function documentErrors(input: RoutingInput): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  input.rules.forEach((rule, r) => {
    if (rule.id === undefined) return;
    if (seen.has(rule.id)) errors.push({ path: `rules.${r}.id`, message: 'is used by another rule' });
    seen.add(rule.id);
  });
  const located = input.rules.flatMap((rule, r) =>
    rule.matchers.map((matcher, m) => ({ matcher, path: `rules.${r}.matchers.${m}.value` })),
  );
  const refused = await compileMatchers(located.map(({ matcher }) => matcher));
  const path = refused && located[refused.index]?.path;
  if (refused && path) errors.push({ path, message: refused.message });
  return errors;
}

/** Every place a channel ID is named, with its path, for "no such channel" errors. */
function channelReferences(input: RoutingInput): Array<{ path: string; id: string }> {
  return [
    ...input.defaults.channelIds.map((id, c) => ({ path: `defaults.channelIds.${c}`, id })),
    ...input.rules.flatMap((rule, r) =>
      rule.channelIds.map((id, c) => ({ path: `rules.${r}.channelIds.${c}`, id })),
    ),
  ];
}

const failed = (errors: FieldError[]): HttpProblem =>
  new HttpProblem('validation_failed', `${errors[0]?.path}: ${errors[0]?.message}`, { errors });

// A revision as If-Match carries it: bare (`3`) or as the entity tag GET sends (`"3"`).
const REVISION = '(?:[0-9]{1,10}|"[0-9]{1,10}")';

/**
 * `If-Match` as the rules PUT takes it, for the route schema (validation and the OpenAPI document
 * alike): `*`, or one revision or more, bare or quoted, separated by commas.
 */
export const IF_MATCH_PATTERN = `^(?:\\*|${REVISION}(?:[ \\t]*,[ \\t]*${REVISION})*)$`;
const IF_MATCH = new RegExp(IF_MATCH_PATTERN, 'u');

/**
 * `If-Match` as sent: the revisions it accepts (null: any, for `*`), or undefined when the header is
 * absent. The route schema refuses anything else first; this says the same for any other caller.
 */
export function parseIfMatch(header: string | undefined): number[] | null | undefined {
  if (header === undefined) return undefined;
  if (!IF_MATCH.test(header)) {
    throw fieldProblem(
      'headers.if-match',
      'is not a revision (an integer, bare or quoted, a list of them, or *)',
    );
  }
  if (header === '*') return null;
  return header.split(',').map((part) => Number(part.trim().replaceAll('"', '')));
}

/**
 * PUT: replaces the whole document. The channel rows it names and then the routing row are locked
 * for the transaction, so the If-Match check, the channel check and the write see one state, and of
 * two writers holding the same revision exactly one succeeds. Audited in the same transaction.
 */
export async function replaceRoutingDocument(
  ctx: AppContext,
  origin: AuditOrigin,
  input: RoutingInput,
  expected: number[] | null | undefined,
): Promise<RoutingDocument> {
  const errors = await documentErrors(input);
  if (errors.length > 0) throw failed(errors);
  const { defaults, rules } = documentOf(input);

  return ctx.db.transaction().execute(async (trx) => {
    await lockNamedChannels(trx, input);
    const initial = initialDocument();
    const current = await lockRoutingRow(trx, {
      revision: initial.revision,
      document: { defaults: initial.defaults, rules: initial.rules },
      updatedAt: origin.at,
    });
    if (expected && !expected.includes(current.revision)) {
      throw new HttpProblem(
        'conflict',
        `The rules changed since revision ${expected.join(', ')}; the current revision is ${current.revision}.`,
      );
    }

    const revision = current.revision + 1;
    await updateRoutingRow(trx, { revision, document: { defaults, rules }, updatedAt: origin.at });
    await recordAudit(trx, origin, {
      action: 'alerting.rules.replace',
      tenantId: null,
      targetType: 'alert_routing',
      metadata: {
        revision,
        previousRevision: current.revision,
        ruleCount: rules.length,
        channelIds: [...channelIdsInUse({ revision, defaults, rules })].sort(),
      },
    });
    return { revision, defaults, rules };
  });
}

/** The document a checked PUT body stores: every omitted part with its default, new rules with an ID. */
function documentOf(input: RoutingInput): Omit<RoutingDocument, 'revision'> {
  const rules: RoutingRule[] = input.rules.map((rule) => ({
    id: rule.id ?? newId('rul'),
    name: rule.name,
    enabled: rule.enabled ?? true,
    matchers: rule.matchers.map(({ name, op, value }) => ({ name, op, value })),
    channelIds: rule.channelIds,
    continue: rule.continue ?? false,
    repeatIntervalSeconds: rule.repeatIntervalSeconds ?? null,
  }));
  const defaults: RoutingDefaults = {
    channelIds: input.defaults.channelIds,
    repeatIntervalSeconds: input.defaults.repeatIntervalSeconds,
  };
  return { defaults, rules };
}

/** Locks the channels the document names until the transaction ends; naming one that does not exist fails validation. */
async function lockNamedChannels(trx: Kysely<DB>, input: RoutingInput): Promise<void> {
  const references = channelReferences(input);
  const existing = await lockExistingChannelIds(
    trx,
    references.map((ref) => ref.id),
  );
  const unknown = references
    .filter((ref) => !existing.has(ref.id))
    .map((ref) => ({ path: ref.path, message: `is not a known channel (${ref.id})` }));
  if (unknown.length > 0) throw failed(unknown);
}

// A source's page (docs/operators/web-ui.md, docs/api/sources.md): what it is (provider, status, ingest
// URL, event types, rate), its actions, and its request log (RequestLog.tsx), which follows new requests
// by itself: a provider sends whenever it likes.
import type { ComponentChildren } from 'preact';
import { useLocation, useRoute } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api } from '../common/api.js';
import { formatPreciseDate, Time } from '../common/format.js';
import { useFollow, useResource } from '../common/hooks.js';
import { PageHeader } from '../common/Layout.js';
import { DoneNotice, ErrorNotice, Loading, Notice, StatusBadge, useDoneNotice } from '../common/Notice.js';
import { routes, type Source } from '../common/routes.js';
import { canManageKeys, session } from '../common/session.js';
import { IngestUrlField } from './IngestUrl.js';
import { RequestLog } from './RequestLog.js';
import {
  pausedText,
  SourceButtons,
  SourceDialogs,
  usePauseToggle,
  type SourceDialog,
} from './SourceActions.js';
import { SOURCE_STATUS_WORDS } from './SourcesPage.js';
import { schemeWords, SOURCES_PAGE } from './words.js';

function Fact({ label, children, wide }: { label: string; children: ComponentChildren; wide?: boolean }) {
  return (
    <div class={wide ? 'connection-fact-wide' : undefined}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** The hmac scheme's fields that are set, in words. */
const HMAC_FIELDS: [string, string][] = [
  ['signatureHeader', 'Signature header'],
  ['encoding', 'Digest encoding'],
  ['signaturePrefix', 'Signature prefix'],
  ['typePath', 'Event type field'],
  ['eventType', 'Fixed event type'],
  ['idPath', 'Delivery ID field'],
  ['idHeader', 'Delivery ID header'],
];

function SourceFacts({ source }: { source: Source }) {
  const words = schemeWords(source.scheme);
  const overlap =
    source.previousSecretValidUntil && Date.parse(source.previousSecretValidUntil) > Date.now()
      ? source.previousSecretValidUntil
      : null;
  const own = source as Record<string, unknown>;
  return (
    <section class="card stack" aria-label="Source">
      <IngestUrlField
        url={source.ingestUrl}
        hint={`Where ${words.label} sends: paste it in its webhook settings. Only requests signed with this source’s secret are accepted.`}
      />
      <dl class="connection-facts">
        <Fact label="Provider">{words.label}</Fact>
        <Fact label="Status">
          <StatusBadge status={source.status} label={SOURCE_STATUS_WORDS[source.status]} />
        </Fact>
        <Fact label="Event types">
          <span class="mono break">{source.typePrefix}.*</span>
        </Fact>
        <Fact label="Rate limit">{source.maxPerSecond.toLocaleString()} requests a second</Fact>
        <Fact label="Created">
          <Time at={source.createdAt} />
        </Fact>
        {overlap ? (
          <Fact label="Old secret verifies until">
            <time dateTime={overlap}>{formatPreciseDate(overlap)}</time>
          </Fact>
        ) : null}
        {source.scheme === 'hmac'
          ? HMAC_FIELDS.filter(([key]) => typeof own[key] === 'string').map(([key, label]) => (
              <Fact key={key} label={label}>
                <span class="mono break">{String(own[key])}</span>
              </Fact>
            ))
          : null}
      </dl>
    </section>
  );
}

/** One source and its request log. */
export function SourcePage() {
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params.id ?? '';
  const canManage = canManageKeys(session.value);
  const [open, setOpen] = useState<SourceDialog>(null);
  const { done, setDone, ref: doneNotice, dismiss } = useDoneNotice(id);
  const source = useResource((signal) => api(routes.sources.get, { params: { id }, signal }), `source ${id}`);
  // Another person may pause, rotate or delete it meanwhile: the page follows.
  useFollow(source);
  const toggle = usePauseToggle((edited) => {
    source.reload();
    setDone(pausedText(edited));
  });

  if (!source.data) {
    return (
      <>
        <PageHeader title="Source" back={{ href: SOURCES_PAGE, label: 'Sources' }} />
        {source.error?.code === 'not_found' ? (
          <Notice tone="warning">There is no such source: it may have been deleted.</Notice>
        ) : source.error ? (
          <ErrorNotice error={source.error} title="The source could not be loaded." />
        ) : (
          <Loading what="Loading the source" />
        )}
      </>
    );
  }
  const current = source.data;
  return (
    <>
      <PageHeader
        title={current.name}
        back={{ href: SOURCES_PAGE, label: 'Sources' }}
        description={`${schemeWords(current.scheme).label} webhooks, verified and published as events.`}
        actions={
          canManage ? (
            <SourceButtons
              source={current}
              busy={toggle.busy}
              onToggle={(s) => {
                setDone(null);
                void toggle.run(s);
              }}
              onOpen={(dialog) => {
                setDone(null);
                setOpen(dialog);
              }}
            />
          ) : null
        }
      />
      <DoneNotice done={done} noticeRef={doneNotice} onDismiss={dismiss} />
      <ErrorNotice error={toggle.error} title="The source could not be changed." />
      {current.status === 'paused' && !done ? (
        <Notice tone="warning">
          <strong>Paused.</strong> Its ingest URL answers 503 with Retry-After: the provider tries again
          later, and nothing is published until it is resumed.
        </Notice>
      ) : null}
      <SourceFacts source={current} />
      <RequestLog source={current} />
      <SourceDialogs
        open={open}
        onClose={() => setOpen(null)}
        onChanged={source.reload}
        onDeleted={() => route(SOURCES_PAGE)}
        onDone={setDone}
      />
    </>
  );
}

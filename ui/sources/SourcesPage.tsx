// The sources page (docs/operators/web-ui.md, docs/api/sources.md): the tenant's incoming webhooks, each
// with its scheme, status and ingest URL (copy), and, for administrators, new source, pause or resume,
// rotate secret and delete.
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, withQuery } from '../common/api.js';
import { Time } from '../common/format.js';
import { useFollow, useResource, type Resource } from '../common/hooks.js';
import { PageHeader } from '../common/Layout.js';
import {
  DoneNotice,
  EmptyState,
  ErrorNotice,
  Loading,
  Notice,
  StatusBadge,
  useDoneNotice,
} from '../common/Notice.js';
import { Pager } from '../common/Pager.js';
import { routes, type Page, type Source } from '../common/routes.js';
import { canManageKeys, session } from '../common/session.js';
import { IngestUrlCell } from './IngestUrl.js';
import { NewSourceDialog } from './NewSourceDialog.js';
import {
  pausedText,
  SourceButtons,
  SourceDialogs,
  usePauseToggle,
  type SourceDialog,
} from './SourceActions.js';
import { schemeWords, sourcePage, SOURCES_PAGE } from './words.js';

export const SOURCE_STATUS_WORDS: Record<Source['status'], string> = { active: 'Active', paused: 'Paused' };

function SourceRow({
  source,
  canManage,
  busy,
  onToggle,
  onOpen,
}: {
  source: Source;
  canManage: boolean;
  busy: boolean;
  onToggle: (source: Source) => void;
  onOpen: (dialog: SourceDialog) => void;
}) {
  return (
    <tr>
      <th scope="row" class="source-name">
        <a href={sourcePage(source.id)}>
          {source.name}
          <span class="visually-hidden">: request log</span>
        </a>
        <span class="key-created">
          Created <Time at={source.createdAt} />
        </span>
      </th>
      <td data-label="Provider">{schemeWords(source.scheme).label}</td>
      <td data-label="Status">
        <StatusBadge status={source.status} label={SOURCE_STATUS_WORDS[source.status]} />
      </td>
      <td data-label="Ingest URL">
        <IngestUrlCell url={source.ingestUrl} name={source.name} />
      </td>
      <td class="actions">
        {canManage ? <SourceButtons source={source} busy={busy} onToggle={onToggle} onOpen={onOpen} /> : null}
      </td>
    </tr>
  );
}

function SourceTable(props: {
  sources: Source[];
  canManage: boolean;
  busyId: string | null;
  onToggle: (source: Source) => void;
  onOpen: (dialog: SourceDialog) => void;
}) {
  return (
    // On a phone each source is a card (`cards-on-phone`, styles.css): its actions stay in reach.
    <div class="table-wrap">
      <table class="source-table cards-on-phone">
        <caption class="visually-hidden">Sources, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Provider</th>
            <th scope="col">Status</th>
            <th scope="col">Ingest URL</th>
            <th scope="col" class="actions">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.sources.map((source) => (
            <SourceRow
              key={source.id}
              source={source}
              canManage={props.canManage}
              busy={props.busyId === source.id}
              onToggle={props.onToggle}
              onOpen={props.onOpen}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** What a source is, for a list with none yet. */
function NoSources({ canManage, onNew }: { canManage: boolean; onNew: () => void }) {
  return (
    <EmptyState title="No sources yet">
      <p>
        A source receives another system’s webhooks — GitHub, Stripe, Slack, Shopify, or any sender that signs
        its requests — at an ingest URL of its own. hubgate checks each request’s signature and publishes it
        as an event, which your connections deliver like any other.
        {canManage ? '' : ' An administrator of your organization can create one.'}
      </p>
      {canManage ? (
        <button type="button" class="button button-primary" onClick={onNew}>
          New source
        </button>
      ) : null}
    </EmptyState>
  );
}

function SourcesBody(props: {
  list: Resource<Page<Source>>;
  cursor: string | null;
  canManage: boolean;
  busyId: string | null;
  onNew: () => void;
  onToggle: (source: Source) => void;
  onOpen: (dialog: SourceDialog) => void;
}) {
  const { list, cursor } = props;
  if (list.error?.code === 'entitlement_missing') {
    return (
      <Notice tone="warning">
        Your organization is not entitled to the Integrations module, so it has no sources. Ask your platform
        operator to enable it.
      </Notice>
    );
  }
  if (!list.data) {
    if (list.error) return <ErrorNotice error={list.error} title="The sources could not be loaded." />;
    return <Loading what="Loading the sources" />;
  }
  if (list.data.data.length === 0 && !cursor)
    return <NoSources canManage={props.canManage} onNew={props.onNew} />;
  return (
    <>
      <ErrorNotice error={list.error} title="The sources could not be read again." />
      <SourceTable
        sources={list.data.data}
        canManage={props.canManage}
        busyId={props.busyId}
        onToggle={props.onToggle}
        onOpen={props.onOpen}
      />
      <Pager
        cursor={cursor}
        nextCursor={list.data.nextCursor}
        hrefFor={(next) => withQuery(SOURCES_PAGE, { cursor: next })}
        label="Pages of sources"
      />
    </>
  );
}

/** The tenant's sources of incoming webhooks. */
export function SourcesPage() {
  const { query } = useLocation();
  const cursor = query.cursor || null;
  const canManage = canManageKeys(session.value);
  const [creating, setCreating] = useState(false);
  const [open, setOpen] = useState<SourceDialog>(null);
  const [busyId, setBusyId] = useState<string | null>(null);
  const { done, setDone, ref: doneNotice, dismiss } = useDoneNotice(cursor ?? '');
  const list = useResource(
    (signal) => api(routes.sources.list, { query: { cursor }, signal }),
    `sources ${cursor ?? ''}`,
  );
  // Another person may pause, rotate or delete a source meanwhile: the list follows.
  useFollow(list);
  const toggle = usePauseToggle((source) => {
    list.reload();
    setDone(pausedText(source));
  });
  const onToggle = (source: Source) => {
    setDone(null);
    setBusyId(source.id);
    void toggle.run(source).finally(() => setBusyId(null));
  };
  const onNew = () => {
    setDone(null);
    setCreating(true);
  };
  const empty = list.data?.data.length === 0 && !cursor;
  return (
    <>
      <PageHeader
        title="Sources"
        description="Where other systems send their webhooks to hubgate, to be verified and published as events."
        actions={
          canManage && list.data && !empty ? (
            <button type="button" class="button button-primary" onClick={onNew}>
              New source
            </button>
          ) : null
        }
      />
      <DoneNotice done={done} noticeRef={doneNotice} onDismiss={dismiss} />
      <ErrorNotice error={toggle.error} title="The source could not be changed." />
      <SourcesBody
        list={list}
        cursor={cursor}
        canManage={canManage}
        busyId={busyId}
        onNew={onNew}
        onToggle={onToggle}
        onOpen={(dialog) => {
          setDone(null);
          setOpen(dialog);
        }}
      />
      {creating ? <NewSourceDialog onClose={() => setCreating(false)} onCreated={list.reload} /> : null}
      <SourceDialogs
        open={open}
        onClose={() => setOpen(null)}
        onChanged={list.reload}
        onDeleted={(source) => {
          list.reload();
          setDone(`“${source.name}” is deleted. Its ingest URL answers 404 from now on.`);
        }}
        onDone={setDone}
      />
    </>
  );
}

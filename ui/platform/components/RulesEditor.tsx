import { ErrorNotice, Notice } from '../../components/Notice.js';
import type { Channel } from './ChannelKinds.js';
import { RuleConflict } from './RuleConflict.js';
import { draftOf, type RoutingDocument } from './RuleModel.js';
import { RulesActions } from './RulesActions.js';
import { RulesDefaults } from './RulesDefaults.js';
import { RulesList } from './RulesList.js';
import { RulesSaveErrors } from './RulesSaveErrors.js';
import { useRulesEditor } from './useRulesEditor.js';

/** The routing document's editor, once loaded: the draft, saving with If-Match, a conflict's choice. */
export function RulesEditor({ initial, channels }: { initial: RoutingDocument; channels: Channel[] }) {
  const editor = useRulesEditor(initial);
  const { doc, saving, errorAt, change } = editor;
  const { draft } = doc;
  const { conflict, busy } = saving;
  const names = new Map(channels.map((c) => [c.id, c.name]));
  const channelName = (id: string) => names.get(id) ?? id;
  return (
    <>
      {saving.news ? <Notice tone="success">{saving.news}</Notice> : null}
      {conflict ? (
        <RuleConflict
          theirs={draftOf(conflict)}
          theirRevision={conflict.revision}
          mine={draft}
          channelName={channelName}
          busy={busy}
          onKeepMine={() => editor.saveOver(conflict.revision)}
          onTakeTheirs={() => editor.takeTheirs(conflict)}
        />
      ) : null}
      <form ref={saving.form} class="stack rules-form" noValidate onSubmit={editor.onSubmit}>
        <RulesSaveErrors
          serverErrors={saving.serverErrors}
          checked={editor.checked}
          problems={editor.problems}
        />
        <ErrorNotice error={saving.failure} title="The rules were not saved." />
        <RulesDefaults draft={draft} channels={channels} change={change} errorAt={errorAt} />
        <RulesList draft={draft} channels={channels} change={change} errorAt={errorAt} />
        <RulesActions
          dirty={doc.dirty}
          busy={busy}
          revision={doc.saved.revision}
          blocked={conflict !== null}
          onDiscard={editor.discard}
        />
      </form>
    </>
  );
}

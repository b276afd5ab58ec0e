import type { Page } from '../../api-types.js';
import { withQuery } from '../../api.js';
import { Loading } from '../../components/Loading.js';
import { ErrorNotice } from '../../components/Notice.js';
import { PageHeader } from '../../components/PageHeader.js';
import { useResource } from '../../hooks.js';
import { CHANNELS_PATH, type Channel } from '../components/ChannelKinds.js';
import { RULES_PATH, type RoutingDocument } from '../components/RuleModel.js';
import { RulesEditor } from '../components/RulesEditor.js';
import { platformApi } from '../key.js';

interface Loaded {
  doc: RoutingDocument;
  channels: Channel[];
}

async function load(signal: AbortSignal): Promise<Loaded> {
  const [doc, channels] = await Promise.all([
    platformApi<RoutingDocument>('GET', RULES_PATH, { signal }),
    platformApi<Page<Channel>>('GET', withQuery(CHANNELS_PATH, { limit: 100 }), { signal }),
  ]);
  return { doc, channels: channels.data };
}

/**
 * The operator console's routing rules (contract §9, §12): the alert routing document edited as
 * defaults and ordered rules, checked before saving, saved with If-Match; a conflict shows both
 * versions and loses nothing.
 */
export function RulesPage() {
  const loaded = useResource(load, 'rules');
  let body;
  if (loaded.error && !loaded.data)
    body = <ErrorNotice error={loaded.error} title="The rules could not be loaded." />;
  else if (!loaded.data) body = <Loading what="Loading the routing rules" />;
  else body = <RulesEditor initial={loaded.data.doc} channels={loaded.data.channels} />;
  return (
    <>
      <PageHeader
        title="Routing rules"
        description={
          <>
            Which of the platform’s alerts go to which <a href="/platform/alerting/channels">channel</a>, and
            how often a firing alert is repeated.
          </>
        }
      />
      {body}
    </>
  );
}

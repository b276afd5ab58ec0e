import type { Migration } from 'kysely/migration';
import * as m0001 from './0001_foundation.js';
import * as m0002 from './0002_access.js';
import * as m0003 from './0003_connections.js';
import * as m0004 from './0004_delivery.js';
import * as m0005 from './0005_alerting.js';
import * as m0006 from './0006_alert_groups.js';
import * as m0007 from './0007_audit_retention_index.js';
import * as m0008 from './0008_setup_tokens.js';
import * as m0009 from './0009_passkeys.js';
import * as m0010 from './0010_monitoring_history.js';
import * as m0011 from './0011_channel_last_attempt.js';
import * as m0012 from './0012_partitioned_deliveries.js';
import * as m0013 from './0013_operating_deliveries.js';
import * as m0014 from './0014_people.js';
import * as m0015 from './0015_event_trace_context.js';
import * as m0016 from './0016_event_type_catalog.js';
import * as m0017 from './0017_ordered_delivery.js';
import * as m0018 from './0018_oauth.js';
import * as m0019 from './0019_invitations_reserve_nothing.js';
import * as m0020 from './0020_delivery_publish_order.js';
import * as m0021 from './0021_filtered_events.js';
import * as m0022 from './0022_oauth_authorizations.js';
import * as m0023 from './0023_portal_sessions.js';
import * as m0024 from './0024_portal_settings.js';
import * as m0025 from './0025_connect_sessions.js';
import * as m0026 from './0026_oauth_state_owners.js';
import * as m0027 from './0027_portal_caps.js';
import * as m0028 from './0028_mcp_oauth.js';
import * as m0029 from './0029_sources.js';
import * as m0030 from './0030_usage.js';
import * as m0031 from './0031_quotas.js';
import * as m0032 from './0032_key_rate_limits.js';

/**
 * Every migration, in order. Listed statically (not read from a folder) so the same set runs from
 * `src/` under tsx, from `dist/`, and from a bundled build, on PGlite and PostgreSQL alike.
 */
export const MIGRATIONS: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_access': m0002,
  '0003_connections': m0003,
  '0004_delivery': m0004,
  '0005_alerting': m0005,
  '0006_alert_groups': m0006,
  '0007_audit_retention_index': m0007,
  '0008_setup_tokens': m0008,
  '0009_passkeys': m0009,
  '0010_monitoring_history': m0010,
  '0011_channel_last_attempt': m0011,
  '0012_partitioned_deliveries': m0012,
  '0013_operating_deliveries': m0013,
  '0014_people': m0014,
  '0015_event_trace_context': m0015,
  '0016_event_type_catalog': m0016,
  '0017_ordered_delivery': m0017,
  '0018_oauth': m0018,
  '0019_invitations_reserve_nothing': m0019,
  '0020_delivery_publish_order': m0020,
  '0021_filtered_events': m0021,
  '0022_oauth_authorizations': m0022,
  '0023_portal_sessions': m0023,
  '0024_portal_settings': m0024,
  '0025_connect_sessions': m0025,
  '0026_oauth_state_owners': m0026,
  '0027_portal_caps': m0027,
  '0028_mcp_oauth': m0028,
  '0029_sources': m0029,
  '0030_usage': m0030,
  '0031_quotas': m0031,
  '0032_key_rate_limits': m0032,
};

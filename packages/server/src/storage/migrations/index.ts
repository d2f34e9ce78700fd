import type { Migration, MigrationProvider } from 'kysely';
import { foundation } from './0001_foundation.js';
import { oauth2 } from './0002_oauth2.js';
import { lobbies } from './0003_lobbies.js';
import { webhooks } from './0004_webhooks.js';
import { entitlements } from './0005_entitlements.js';
import { provisional } from './0006_provisional.js';
import { social } from './0007_social.js';
import { guilds } from './0008_guilds.js';
import { eventLog } from './0009_event_log.js';
import { userImages } from './0010_user_images.js';
import { intentsReview } from './0015_intents_review.js';
import { messages } from './0016_messages.js';
import { tokenGrants } from './0021_token_grants.js';
import { gatewaySessions } from './0022_gateway_sessions.js';
import { threads } from './0023_threads.js';
import { pins } from './0024_pins.js';
import { search } from './0025_search.js';
import { invites } from './0026_invites.js';
import { voiceStatus } from './0027_voice_status.js';
import { linkedChannels } from './0028_linked_channels.js';
import { rpc } from './0029_rpc.js';
import { applications } from './0030_applications.js';
import { commands } from './0031_commands.js';
import { interactions } from './0032_interactions.js';
import { voice } from './0033_voice.js';
import { emulatorFixtures } from './0034_emulator_fixtures.js';
import { interactionUploads } from './0035_interaction_uploads.js';
import { dmCalls } from './0036_dm_calls.js';
import { ringsAndGroupDms } from './0037_rings_and_group_dms.js';
import { lobbyMembersVersion } from './0038_lobby_members_version.js';
import { managedGroupDms } from './0039_managed_group_dms.js';
import { eventLogAppend } from './0040_event_log_append.js';
import { tokenIndexes } from './0042_token_indexes.js';
import { lobbyMessageAge } from './0043_lobby_message_age.js';

/** Every migration, in order. Names sort; a shipped migration is never edited, only followed. */
const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_oauth2': oauth2,
  '0003_lobbies': lobbies,
  '0004_webhooks': webhooks,
  '0005_entitlements': entitlements,
  '0006_provisional': provisional,
  '0007_social': social,
  '0008_guilds': guilds,
  '0009_event_log': eventLog,
  '0010_user_images': userImages,
  '0015_intents_review': intentsReview,
  '0016_messages': messages,
  '0021_token_grants': tokenGrants,
  '0022_gateway_sessions': gatewaySessions,
  '0023_threads': threads,
  '0024_pins': pins,
  '0025_search': search,
  '0026_invites': invites,
  '0027_voice_status': voiceStatus,
  '0028_linked_channels': linkedChannels,
  '0029_rpc': rpc,
  '0030_applications': applications,
  '0031_commands': commands,
  '0032_interactions': interactions,
  '0033_voice': voice,
  '0034_emulator_fixtures': emulatorFixtures,
  '0035_interaction_uploads': interactionUploads,
  '0036_dm_calls': dmCalls,
  '0037_rings_and_group_dms': ringsAndGroupDms,
  '0038_lobby_members_version': lobbyMembersVersion,
  '0039_managed_group_dms': managedGroupDms,
  '0040_event_log_append': eventLogAppend,
  '0042_token_indexes': tokenIndexes,
  '0043_lobby_message_age': lobbyMessageAge,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};

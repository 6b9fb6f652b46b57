// Chat's migrations, in order. Versions are numbered across both services (one keel_schema table
// records them): a new migration takes the next number free in src/infra/migrations and
// src/chat/migrations together. Never edit one that has shipped.
import type { Migration } from '../../platform/db/migrate.js';
import { chatCore } from './003_chat_core.js';
import { chatUsers } from './004_chat_users.js';
import { chatSearch } from './005_chat_search.js';
import { chatPresence } from './006_chat_presence.js';
import { chatTopicIndex } from './007_chat_topic_index.js';
import { chatSubscriptionSpans } from './008_chat_subscription_spans.js';
import { chatEventQueues } from './009_chat_event_queues.js';
import { chatAlertWords } from './010_chat_alert_words.js';
import { chatUserPrefs } from './011_chat_user_prefs.js';
import { chatMessageEdits } from './012_chat_message_edits.js';
import { chatRealmAdmin } from './013_chat_realm_admin.js';
import { chatRealmSettings } from './014_chat_realm_settings.js';
import { chatSpectators } from './015_chat_spectators.js';
import { chatChannelCreation } from './016_chat_channel_creation.js';
import { chatRealmDeactivation } from './017_chat_realm_deactivation.js';
import { chatRealmRules } from './018_chat_realm_rules.js';
import { chatSearchStems } from './019_chat_search_stems.js';
import { chatHiddenEmails } from './020_chat_hidden_emails.js';
import { chatAttachments } from './026_chat_attachments.js';
import { chatOrgData } from './027_chat_org_data.js';
import { chatPushDevices } from './028_chat_push_devices.js';
import { chatInvites } from './029_chat_invites.js';
import { chatScheduledMessages } from './030_chat_scheduled_messages.js';
import { chatRealmExports } from './031_chat_realm_exports.js';
import { chatAttachmentsRealm } from './032_chat_attachments_realm.js';
import { chatUploadedImages } from './033_chat_uploaded_images.js';
import { chatSessions } from './035_chat_sessions.js';

export const CHAT_MIGRATIONS: readonly Migration[] = [
  chatCore,
  chatUsers,
  chatSearch,
  chatPresence,
  chatTopicIndex,
  chatSubscriptionSpans,
  chatEventQueues,
  chatAlertWords,
  chatUserPrefs,
  chatMessageEdits,
  chatRealmAdmin,
  chatRealmSettings,
  chatSpectators,
  chatChannelCreation,
  chatRealmDeactivation,
  chatRealmRules,
  chatSearchStems,
  chatHiddenEmails,
  chatAttachments,
  chatOrgData,
  chatPushDevices,
  chatInvites,
  chatScheduledMessages,
  chatRealmExports,
  chatAttachmentsRealm,
  chatUploadedImages,
  chatSessions,
];

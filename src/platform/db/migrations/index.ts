// Every migration, in order. Add a new file with the number you were given; never edit one that has shipped.
import type { Migration } from '../migrate.js';
import { infraCore } from './001_infra_core.js';
import { dns } from './002_dns.js';
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

export const MIGRATIONS: Migration[] = [
  infraCore, dns, chatCore, chatUsers, chatSearch, chatPresence, chatTopicIndex, chatSubscriptionSpans, chatEventQueues, chatAlertWords, chatUserPrefs,
  chatMessageEdits, chatRealmAdmin, chatRealmSettings, chatSpectators, chatChannelCreation, chatRealmDeactivation,
];

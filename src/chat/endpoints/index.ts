// Every Chat endpoint definition, by area, for the router and the OpenAPI document (which is served
// here too, made from this very list). A definition not listed here is not served.
import Type from 'typebox';
import { defineEndpoint, type Endpoint } from '../endpoint.js';
import { chatOpenApiDocument, type EndpointArea } from '../openapi.js';
import { fetchApiKey, getServerSettings } from './server.js';
import {
  createUserEndpoint,
  deactivateOwnUser,
  deactivateUser,
  getOwnUser,
  getUser,
  getUserByEmail,
  getUsers,
  reactivateUser,
  regenerateOwnApiKey,
  updateUserByEmail,
  updateUserById,
} from './users.js';
import { createBot, deactivateBot, getBots, regenerateBotApiKey, updateBot } from './bots.js';
import {
  addDefaultStream,
  archiveStream,
  getStreamById,
  getStreamId,
  getStreamMembers,
  getStreams,
  getStreamTopics,
  getSubscriptionStatus,
  getSubscriptions,
  removeDefaultStream,
  subscribeEndpoint,
  unsubscribeEndpoint,
  updateStream,
  updateSubscriptionProperty,
  updateSubscriptions,
  updateSubscriptionSettings,
} from './channels.js';
import { getMessage, getMessages, matchesNarrow, renderMessageEndpoint, sendMessage } from './messages.js';
import { deleteQueue, getEvents, registerQueue } from './events.js';
import { getRealmPresence, getUserPresence, getUserStatus, updatePresence, updateStatus } from './presence.js';
import { setEditTypingStatus, setTypingStatus } from './typing.js';
import { addReaction, deleteMessageEndpoint, getMessageHistory, removeReaction, updateMessage } from './message-edits.js';
import {
  createUserGroup,
  deactivateUserGroup,
  getIsUserGroupMember,
  getUserGroupMembers,
  getUserGroups,
  getUserGroupSubgroups,
  updateUserGroup,
  updateUserGroupMembers,
  updateUserGroupSubgroups,
} from './user-groups.js';
import { deleteAvatar, deleteRealmIcon, deleteRealmLogo, uploadAvatar, uploadCustomEmoji, uploadRealmIcon, uploadRealmLogo } from './images.js';
import { addLinkifier, deactivateCustomEmoji, deactivateRealm, getCustomEmoji, getLinkifiers, removeLinkifier, reorderLinkifiers, updateLinkifier, updateRealm } from './realm.js';
import { addAlertWordsEndpoint, getAlertWords, removeAlertWordsEndpoint } from './alert-words.js';
import { updateDisplaySettingsLegacy, updateNotificationSettingsLegacy, updateRealmUserSettingsDefaults, updateSettings } from './settings.js';
import { createDrafts, deleteDraft, editDraft, getDrafts } from './drafts.js';
import { muteUser, unmuteUser, updateMutedTopic, updateUserTopic } from './muting.js';
import { markAllAsRead, markStreamAsRead, markTopicAsRead, updateMessageFlags, updateMessageFlagsForNarrow } from './flags.js';

/** GET /openapi.json: this API's OpenAPI 3.1 document, made from the areas below (chat/openapi.ts). */
export const getOpenApiDocument = defineEndpoint({
  method: 'GET',
  path: '/openapi.json',
  summary: 'Get the OpenAPI document',
  auth: 'none',
  document: true,
  params: Type.Object({}),
  async handler() {
    return openApiDocument();
  },
});

/** Each area is one file of this folder; it becomes a tag of the document and a section of docs/chat-api.md. */
export const ENDPOINT_AREAS: readonly EndpointArea[] = [
  { name: 'server', description: 'What a client asks before logging in, password login for an API key, and this document.', endpoints: [getServerSettings, fetchApiKey, getOpenApiDocument] },
  {
    name: 'users',
    description: 'Who am I, the directory, one user by id or email; creating, updating, deactivating and reactivating users (administrators); leaving the organization.',
    endpoints: [getOwnUser, getUsers, getUser, getUserByEmail, createUserEndpoint, updateUserById, updateUserByEmail, deactivateUser, reactivateUser, deactivateOwnUser, regenerateOwnApiKey],
  },
  {
    name: 'bots',
    description: 'Generic bots, with API keys of their own: created, listed, renamed, handed over and deactivated by their owners and administrators.',
    endpoints: [createBot, getBots, updateBot, deactivateBot, regenerateBotApiKey],
  },
  {
    name: 'channels',
    description: 'Channels and subscriptions: subscribing (which creates channels), listing, finding, changing and archiving channels, members, topics, subscription settings and default channels.',
    endpoints: [
      subscribeEndpoint,
      getSubscriptions,
      getStreams,
      getStreamId,
      getStreamById,
      updateStream,
      archiveStream,
      getStreamMembers,
      getSubscriptionStatus,
      getStreamTopics,
      unsubscribeEndpoint,
      updateSubscriptionSettings,
      updateSubscriptionProperty,
      updateSubscriptions,
      addDefaultStream,
      removeDefaultStream,
    ],
  },
  {
    name: 'messages',
    description: 'Sending (to a channel topic or directly) and fetching messages (an anchor window or ids, within a narrow), and rendering Markdown.',
    endpoints: [sendMessage, getMessages, matchesNarrow, getMessage, renderMessageEndpoint],
  },
  {
    name: 'message-edits',
    description: 'Changes to sent messages: editing and moving, edit history, deletion and emoji reactions.',
    endpoints: [updateMessage, deleteMessageEndpoint, getMessageHistory, addReaction, removeReaction],
  },
  {
    name: 'flags',
    description: 'Read state and personal flags, by message ids or over a narrow, and the older mark-as-read endpoints.',
    endpoints: [updateMessageFlags, updateMessageFlagsForNarrow, markAllAsRead, markStreamAsRead, markTopicAsRead],
  },
  { name: 'events', description: 'Real-time events: registering an event queue with the initial state, long-polling it, and deleting it.', endpoints: [registerQueue, getEvents, deleteQueue] },
  { name: 'presence', description: 'Presence (the ping every client sends) and status.', endpoints: [updatePresence, getRealmPresence, getUserPresence, updateStatus, getUserStatus] },
  { name: 'typing', description: 'Typing notifications, composing and editing; nothing is stored.', endpoints: [setTypingStatus, setEditTypingStatus] },
  {
    name: 'user-groups',
    description: 'User groups: listing, creating, updating, members and subgroups, membership checks and deactivation.',
    endpoints: [
      getUserGroups,
      createUserGroup,
      updateUserGroup,
      updateUserGroupMembers,
      updateUserGroupSubgroups,
      getUserGroupMembers,
      getUserGroupSubgroups,
      getIsUserGroupMember,
      deactivateUserGroup,
    ],
  },
  {
    name: 'realm',
    description: 'Organization settings (administrators), deactivation (owners), linkifiers and custom emoji.',
    endpoints: [updateRealm, deactivateRealm, getLinkifiers, addLinkifier, updateLinkifier, removeLinkifier, reorderLinkifiers, getCustomEmoji, deactivateCustomEmoji],
  },
  {
    name: 'images',
    description: "Uploaded images: custom emoji, the user's avatar, the realm's icon and logos (multipart bodies; the images are served under /user_avatars/).",
    endpoints: [uploadCustomEmoji, uploadAvatar, deleteAvatar, uploadRealmIcon, deleteRealmIcon, uploadRealmLogo, deleteRealmLogo],
  },
  { name: 'alert-words', description: 'Words that alert a user when a message mentions them.', endpoints: [getAlertWords, addAlertWordsEndpoint, removeAlertWordsEndpoint] },
  {
    name: 'settings',
    description: "Personal settings, and the realm's defaults for new users (administrators).",
    endpoints: [updateSettings, updateNotificationSettingsLegacy, updateDisplaySettingsLegacy, updateRealmUserSettingsDefaults],
  },
  { name: 'drafts', description: "Drafts synchronised between a user's clients.", endpoints: [getDrafts, createDrafts, editDraft, deleteDraft] },
  { name: 'muting', description: "Muting users, and topics' visibility policies.", endpoints: [muteUser, unmuteUser, updateUserTopic, updateMutedTopic] },
];

export function allEndpoints(): Endpoint[] {
  return ENDPOINT_AREAS.flatMap((area) => area.endpoints);
}

/** Made on first request: the definitions do not change while the process runs. */
let document: Record<string, unknown> | undefined;

export function openApiDocument(): Record<string, unknown> {
  document ??= chatOpenApiDocument(ENDPOINT_AREAS);
  return document;
}

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
import { createInviteLink, getInvites, resendEmailInvite, revokeEmailInvite, revokeInviteLink, sendInvites } from './invites.js';
import { getStreamEmailAddress } from './channel-email.js';
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
import { createRealmExport, deleteRealmExport, getRealmExportConsents, getRealmExports } from './exports.js';
import { getAttachments, getFileTemporaryUrl, removeAttachment, uploadFile } from './uploads.js';
import { muteUser, unmuteUser, updateMutedTopic, updateUserTopic } from './muting.js';
import { deleteTopic } from './topic-deletion.js';
import { addApnsToken, addFcmToken, removeApnsToken, removeFcmToken, sendTestNotification } from './push.js';
import { createBigBlueButtonCall } from './calls.js';
import { devFetchApiKey } from './dev-login.js';
import { markAllAsRead, markStreamAsRead, markTopicAsRead, updateMessageFlags, updateMessageFlagsForNarrow } from './flags.js';
import { createProfileField, deleteProfileField, getProfileFields, removeOwnProfileData, reorderProfileFields, updateOwnProfileData, updateProfileField } from './profile-fields.js';
import { addPlayground, removePlayground } from './playgrounds.js';
import { createSavedSnippet, deleteSavedSnippet, editSavedSnippet, getSavedSnippets } from './saved-snippets.js';
import { getReadReceipts } from './read-receipts.js';
import { createScheduledMessage, deleteScheduledMessage, getScheduledMessages, updateScheduledMessage } from './scheduled-messages.js';

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
    description: 'Changes to sent messages: editing and moving, edit history, deletion (one message, or a whole topic by an administrator) and emoji reactions.',
    endpoints: [updateMessage, deleteMessageEndpoint, getMessageHistory, addReaction, removeReaction, deleteTopic],
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
  {
    name: 'uploads',
    description: "Uploaded files: upload, temporary URLs, and the list and removal of one's uploads.",
    endpoints: [uploadFile, getFileTemporaryUrl, getAttachments, removeAttachment],
  },
  { name: 'muting', description: "Muting users, and topics' visibility policies.", endpoints: [muteUser, unmuteUser, updateUserTopic, updateMutedTopic] },
  {
    name: 'profile-fields',
    description: "Custom profile fields: the organization's fields (administrators define, change, reorder and delete them) and users' own values.",
    endpoints: [getProfileFields, createProfileField, reorderProfileFields, updateProfileField, deleteProfileField, updateOwnProfileData, removeOwnProfileData],
  },
  { name: 'playgrounds', description: 'Code playgrounds: links that open a code block of a language elsewhere (administrators).', endpoints: [addPlayground, removePlayground] },
  { name: 'saved-snippets', description: "A user's saved snippets of message text.", endpoints: [getSavedSnippets, createSavedSnippet, editSavedSnippet, deleteSavedSnippet] },
  { name: 'read-receipts', description: 'Who has read a message, where the organization and the readers allow it.', endpoints: [getReadReceipts] },
  {
    name: 'mobile-push',
    description: "Mobile devices' push notification tokens (APNs, FCM) and a test notification through the push notification service (--push-url).",
    endpoints: [addApnsToken, removeApnsToken, addFcmToken, removeFcmToken, sendTestNotification],
  },
  { name: 'video-calls', description: 'BigBlueButton video call links (--bigbluebutton-url, --bigbluebutton-secret).', endpoints: [createBigBlueButtonCall] },
  { name: 'development', description: 'Password-less API keys for developing clients, only with --dev-mode on.', endpoints: [devFetchApiKey] },
  {
    name: 'invites',
    description: "Invitations by e-mail and reusable links (accepted on the server's registration page), and a channel's e-mail address.",
    endpoints: [sendInvites, createInviteLink, getInvites, revokeEmailInvite, revokeInviteLink, resendEmailInvite, getStreamEmailAddress],
  },
  {
    name: 'scheduled-messages',
    description: 'Messages to be sent later: listing, scheduling, editing and cancelling; the server sends each when it comes due.',
    endpoints: [getScheduledMessages, createScheduledMessage, updateScheduledMessage, deleteScheduledMessage],
  },
  {
    name: 'exports',
    description: "The organization's data exports and who consents to their private data being exported (administrators).",
    endpoints: [createRealmExport, getRealmExports, deleteRealmExport, getRealmExportConsents],
  },
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

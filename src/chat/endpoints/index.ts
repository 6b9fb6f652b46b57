// Every Chat endpoint definition, in one list for the router (and later the docs).
import type { Endpoint } from '../endpoint.js';
import { fetchApiKey, getServerSettings } from './server.js';
import {
  createUserEndpoint, deactivateOwnUser, deactivateUser, getOwnUser, getUser, getUserByEmail, getUsers, reactivateUser, regenerateOwnApiKey, updateUserByEmail,
  updateUserById,
} from './users.js';
import { createBot, deactivateBot, getBots, regenerateBotApiKey, updateBot } from './bots.js';
import {
  addDefaultStream, archiveStream, getStreamById, getStreamId, getStreamMembers, getStreams, getStreamTopics, getSubscriptionStatus, getSubscriptions,
  removeDefaultStream, subscribeEndpoint, unsubscribeEndpoint, updateStream, updateSubscriptionSettings,
} from './channels.js';
import { getMessage, getMessages, matchesNarrow, renderMessageEndpoint, sendMessage } from './messages.js';
import { deleteQueue, getEvents, registerQueue } from './events.js';
import { getRealmPresence, getUserPresence, getUserStatus, updatePresence, updateStatus } from './presence.js';
import { setEditTypingStatus, setTypingStatus } from './typing.js';
import { addReaction, deleteMessageEndpoint, getMessageHistory, removeReaction, updateMessage } from './message-edits.js';
import {
  createUserGroup, deactivateUserGroup, getIsUserGroupMember, getUserGroupMembers, getUserGroups, getUserGroupSubgroups, updateUserGroup, updateUserGroupMembers,
  updateUserGroupSubgroups,
} from './user-groups.js';
import {
  addLinkifier, deactivateCustomEmoji, deactivateRealm, getCustomEmoji, getLinkifiers, removeLinkifier, reorderLinkifiers, updateLinkifier, updateRealm,
} from './realm.js';
import { addAlertWordsEndpoint, getAlertWords, removeAlertWordsEndpoint } from './alert-words.js';
import { updateRealmUserSettingsDefaults, updateSettings } from './settings.js';
import { createDrafts, deleteDraft, editDraft, getDrafts } from './drafts.js';
import { muteUser, unmuteUser, updateMutedTopic, updateUserTopic } from './muting.js';
import { markAllAsRead, markStreamAsRead, markTopicAsRead, updateMessageFlags, updateMessageFlagsForNarrow } from './flags.js';

export function allEndpoints(): Endpoint[] {
  return [
    getServerSettings, fetchApiKey,
    getOwnUser, getUsers, getUser, getUserByEmail, createUserEndpoint, updateUserById, updateUserByEmail, deactivateUser, reactivateUser, deactivateOwnUser,
    regenerateOwnApiKey,
    createBot, getBots, updateBot, deactivateBot, regenerateBotApiKey,
    subscribeEndpoint, getSubscriptions, getStreams, getStreamId,
    getStreamById, updateStream, archiveStream, getStreamMembers, getSubscriptionStatus, getStreamTopics, unsubscribeEndpoint, updateSubscriptionSettings,
    addDefaultStream, removeDefaultStream,
    sendMessage, getMessages, matchesNarrow, getMessage, renderMessageEndpoint,
    updateMessage, deleteMessageEndpoint, getMessageHistory, addReaction, removeReaction,
    updateMessageFlags, updateMessageFlagsForNarrow, markAllAsRead, markStreamAsRead, markTopicAsRead,
    registerQueue, getEvents, deleteQueue,
    updatePresence, getRealmPresence, getUserPresence, updateStatus, getUserStatus,
    setTypingStatus, setEditTypingStatus,
    getUserGroups, createUserGroup, updateUserGroup, updateUserGroupMembers, updateUserGroupSubgroups, getUserGroupMembers, getUserGroupSubgroups,
    getIsUserGroupMember, deactivateUserGroup,
    updateRealm, deactivateRealm,
    getLinkifiers, addLinkifier, updateLinkifier, removeLinkifier, reorderLinkifiers, getCustomEmoji, deactivateCustomEmoji,
    getAlertWords, addAlertWordsEndpoint, removeAlertWordsEndpoint,
    updateSettings, updateRealmUserSettingsDefaults,
    getDrafts, createDrafts, editDraft, deleteDraft,
    muteUser, unmuteUser, updateUserTopic, updateMutedTopic,
  ];
}

// Every Chat endpoint definition, in one list for the router (and later the docs).
import type { Endpoint } from '../endpoint.js';
import { fetchApiKey, getServerSettings } from './server.js';
import {
  createUserEndpoint, deactivateOwnUser, deactivateUser, getOwnUser, getUser, getUserByEmail, getUsers, reactivateUser, updateUserByEmail, updateUserById,
} from './users.js';
import { createBot } from './bots.js';
import {
  addDefaultStream, archiveStream, getStreamById, getStreamId, getStreamMembers, getStreams, getStreamTopics, getSubscriptionStatus, getSubscriptions,
  removeDefaultStream, subscribeEndpoint, unsubscribeEndpoint, updateStream, updateSubscriptionSettings,
} from './channels.js';
import { getMessage, getMessages, matchesNarrow, renderMessageEndpoint, sendMessage } from './messages.js';
import { deleteQueue, getEvents, registerQueue } from './events.js';
import { getRealmPresence, getUserPresence, getUserStatus, updatePresence, updateStatus } from './presence.js';
import { setEditTypingStatus, setTypingStatus } from './typing.js';
import { addAlertWordsEndpoint, getAlertWords, removeAlertWordsEndpoint } from './alert-words.js';
import { markAllAsRead, markStreamAsRead, markTopicAsRead, updateMessageFlags, updateMessageFlagsForNarrow } from './flags.js';

export function allEndpoints(): Endpoint[] {
  return [
    getServerSettings, fetchApiKey,
    getOwnUser, getUsers, getUser, getUserByEmail, createUserEndpoint, updateUserById, updateUserByEmail, deactivateUser, reactivateUser, deactivateOwnUser,
    createBot,
    subscribeEndpoint, getSubscriptions, getStreams, getStreamId,
    getStreamById, updateStream, archiveStream, getStreamMembers, getSubscriptionStatus, getStreamTopics, unsubscribeEndpoint, updateSubscriptionSettings,
    addDefaultStream, removeDefaultStream,
    sendMessage, getMessages, matchesNarrow, getMessage, renderMessageEndpoint,
    updateMessageFlags, updateMessageFlagsForNarrow, markAllAsRead, markStreamAsRead, markTopicAsRead,
    registerQueue, getEvents, deleteQueue,
    updatePresence, getRealmPresence, getUserPresence, updateStatus, getUserStatus,
    setTypingStatus, setEditTypingStatus,
    getAlertWords, addAlertWordsEndpoint, removeAlertWordsEndpoint,
  ];
}

// Every Chat endpoint definition, in one list for the router (and later the docs).
import type { Endpoint } from '../endpoint.js';
import { fetchApiKey, getServerSettings } from './server.js';
import { createUserEndpoint, getOwnUser, getUser, getUsers } from './users.js';
import { getStreamId, getStreams, getSubscriptions, subscribeEndpoint } from './channels.js';
import { getMessage, getMessages, renderMessageEndpoint, sendMessage } from './messages.js';
import { markAllAsRead, markStreamAsRead, markTopicAsRead, updateMessageFlags, updateMessageFlagsForNarrow } from './flags.js';

export function allEndpoints(): Endpoint[] {
  return [
    getServerSettings, fetchApiKey,
    getOwnUser, getUsers, getUser, createUserEndpoint,
    subscribeEndpoint, getSubscriptions, getStreams, getStreamId,
    sendMessage, getMessages, getMessage, renderMessageEndpoint,
    updateMessageFlags, updateMessageFlagsForNarrow, markAllAsRead, markStreamAsRead, markTopicAsRead,
  ];
}

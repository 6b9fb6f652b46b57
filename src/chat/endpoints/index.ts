// Every Chat endpoint definition, in one list for the router (and later the docs).
import type { Endpoint } from '../endpoint.js';
import { fetchApiKey, getServerSettings } from './server.js';
import {
  createUserEndpoint, deactivateOwnUser, deactivateUser, getOwnUser, getUser, getUserByEmail, getUsers, reactivateUser, updateUserByEmail, updateUserById,
} from './users.js';
import { createBot } from './bots.js';
import { getStreamId, getStreams, getSubscriptions, subscribeEndpoint } from './channels.js';
import { getMessages, sendMessage } from './messages.js';

export function allEndpoints(): Endpoint[] {
  return [
    getServerSettings, fetchApiKey,
    getOwnUser, getUsers, getUser, getUserByEmail, createUserEndpoint, updateUserById, updateUserByEmail, deactivateUser, reactivateUser, deactivateOwnUser,
    createBot,
    subscribeEndpoint, getSubscriptions, getStreams, getStreamId,
    sendMessage, getMessages,
  ];
}

// What a Chat endpoint is: one definition (method, path, parameter schema, who may call it, handler)
// serves routing, parameter decoding and checking, and the OpenAPI document and docs (openapi.ts).
import type { IncomingMessage } from 'node:http';
import type { FileStore } from '../platform/files/file-store.js';
import type { Mailer } from '../platform/mail/mailer.js';
import type { Static, TObject } from 'typebox';
import type { Database } from '../platform/db/database.js';
import type { Clock } from '../platform/clock.js';
import type { Logger } from '../platform/log.js';
import type { ChatTables, ChatUser, Realm } from './tables.js';
import type { ChatLimits } from './domain/rate-limit.js';
import type { EventHub } from './events/hub.js';
import type { PresenceStore } from './domain/presence.js';
import type { ApiKeySeal } from './domain/api-keys.js';
import type { ReaderCaches } from './domain/reader-cache.js';
import type { ChatError } from './errors.js';
import type { PushService } from './push.js';

export type ChatMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** What every handler can reach. */
export interface ChatServices {
  db: Database<ChatTables>;
  clock: Clock;
  log: Logger;
  /** A realm's canonical URL (the chat listener's address, with the realm's subdomain: domain/subdomains.ts). */
  realmUrl(realm: Realm): string;
  /** The domain realms are subdomains of; requests pick their realm by Host header under it. */
  rootDomain: string;
  /** API budgets per user and per address, and the password budgets of fetch_api_key (domain/rate-limit.ts). */
  limits: ChatLimits;
  /** Event queues and the in-process bus writes publish on after their commit. */
  events: EventHub;
  /** Presence in memory, written to the store in batches (domain/presence.ts). */
  presence: PresenceStore;
  /** Seals and unseals users' API keys (domain/api-keys.ts), under a key kept outside the store. */
  apiKeySeal: ApiKeySeal;
  /** What GET /messages keeps between requests: narrows, receipts, serialized messages (domain/reader-cache.ts). */
  caches: ReaderCaches;
  /** Where uploaded files live (platform/files/): `uploads/` in the data dir by default. */
  files: FileStore;
  /** The push notification service (--push-url); absent: push notifications are off. */
  push?: PushService;
  /** The BigBlueButton server of video calls (--bigbluebutton-url, --bigbluebutton-secret). */
  bigBlueButton?: { url: string; secret: string };
  /** --dev-mode on: POST /dev_fetch_api_key hands out API keys without a password. */
  devMode?: boolean;
  /** How POST /streams/{id}/delete_topic works through a topic: messages per batch, and how long one request goes on. */
  topicDeletion?: { batchSize: number; budgetMs: number };
  /** Outgoing mail (invitations): SMTP or the outbox in the data dir (platform/mail/). */
  mailer: Mailer;
  /** The scheduled messages' scheduler (domain/scheduled-delivery.ts): told when one is added or moved. */
  scheduler?: { wake(): void };
  /** The background writer of realm exports (chat/exports/worker.ts): told when one is requested. */
  exports?: { kick(): void };
  /** The largest upload, in MiB: register's max_file_upload_size_mib (--chat-max-upload-mib). */
  maxFileUploadMib: number;
}

export interface ChatCall {
  services: ChatServices;
  realm: Realm;
  /** The authenticated user; absent for endpoints with auth 'none', and for a spectator's call of one with auth 'spectator'. */
  user?: ChatUser;
  /** Client name, from the `client` parameter or the User-Agent (Zulip's rule). */
  client: string;
  ip: string;
  /** Aborted when the client goes away before the answer is written. */
  signal: AbortSignal;
  /**
   * The request, its body unread, for an endpoint declared with `streamsBody` (POST /user_uploads
   * streams its file to the file store: chat/forms.ts readUpload); undefined for every other endpoint.
   */
  request?: IncomingMessage;
  /**
   * Takes the answer out of the framework's hands, for one that may come much later (a parked
   * long-poll): the handler returns LATER and writes the answer through what this gives, which
   * holds only the response. `gone` runs if the client goes away before that.
   */
  later(gone: () => void): LateAnswer;
}

/** An answer a handler writes when it is ready (see ChatCall.later). */
export interface LateAnswer {
  /**
   * Writes the success answer once what it may acknowledge is durable. `fields` is the JSON text of
   * the fields beside result and msg, without braces (`"events":[...],"queue_id":"..."`), in pieces
   * written one after another (text, or UTF-8 bytes), so that pieces serialized and encoded once can
   * be shared by many answers.
   */
  send(fields: readonly (string | Buffer)[]): void;
  /** Writes an error answer instead (the poll's queue ended under it). */
  fail(error: ChatError): void;
}

/** What a handler that called call.later() returns. */
export const LATER: ChatResult = Object.freeze({});

/** A successful answer's fields beside result and msg. */
export type ChatResult = Record<string, unknown>;

export interface Endpoint<S extends TObject = TObject> {
  method: ChatMethod;
  /** Under /api/v1, with {name} for path parameters (which are also declared in params). */
  path: string;
  summary: string;
  params: S;
  /**
   * 'none' for the unauthenticated endpoints (server_settings, fetch_api_key); 'spectator' for those
   * a request without any credentials may also call (register, GET /messages), whose handler then
   * applies the realm's spectator rules (domain/spectators.ts). Credentials sent are always checked.
   */
  auth: 'none' | 'user' | 'spectator';
  /**
   * Set for an endpoint whose result is a document answered as the whole body, without Zulip's
   * `result` and `msg` beside it (GET /openapi.json: an OpenAPI document allows no other fields).
   */
  document?: true;
  /**
   * Set for an endpoint whose answer is mostly a shared JsonText (made once, answered many times) in
   * a short envelope that is the same for every call: POST /users/me/presence and GET /realm/presence.
   * A client that accepts gzip gets it compressed, the shared part compressed once per text
   * (platform/http/gzip-pieces.ts). Not for answers with much per-request data before the shared
   * part (register): that part would be compressed anew for every answer.
   */
  gzipShared?: true;
  /**
   * Set for an endpoint that reads its own body as a stream (call.request): the listener does not
   * read the form first, and parameters come from the query and the path only.
   */
  streamsBody?: true;
  handler(call: ChatCall, params: Static<S>): Promise<ChatResult>;
}

/** Keeps the parameter type of each definition while the registry holds them as one list. */
export function defineEndpoint<S extends TObject>(e: Endpoint<S>): Endpoint {
  return e as unknown as Endpoint;
}

export function requireUser(call: ChatCall): ChatUser {
  if (!call.user) throw new Error('endpoint reached without an authenticated user');
  return call.user;
}

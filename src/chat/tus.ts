// The resumable upload endpoint /api/v1/tus (tus 1.0: creation, creation-with-upload, HEAD offsets,
// PATCH resumption, termination, expiration), as Zulip runs tusd beside Django: the protocol is
// @tus/server's, the bytes go to a staging directory in the data dir (@tus/file-store, never memory),
// and Keel does what Zulip's tusd hooks do (zerver/views/tusd.py): at creation it authenticates the
// caller and refuses a deferred length (411) or an Upload-Length over the realm's
// max_file_upload_size_mib (413); at the last byte it stores the file as an ordinary attachment
// (domain/uploads.ts storeUpload) and answers `{"url": "/user_uploads/<path_id>", "filename": ...}`.
// Refusals are tusd's shape, `{"message": ...}` in JSON, not Zulip's envelope (tusd is no Zulip API).
//
// Keel is stricter than tusd in two ways: every request (not only creation and the last PATCH) is
// authenticated and must come from the upload's owner (anyone else is told 404), and each user has a
// bound on unfinished uploads (count and declared bytes). Unfinished uploads expire after
// TUS_EXPIRY_MS and are removed by a sweep.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { FileStore as TusFileStore } from '@tus/file-store';
import { Server as TusServer } from '@tus/server';
import { PRIVATE_DIR_MODE } from '../platform/file-modes.js';
import type { ChatServices } from './endpoint.js';
import { ChatError } from './errors.js';
import { tusFinishing, tusTooManyBytes, tusTooManyUploads, tusUnauthenticated, tusUploadTooLarge, tusSizeDeferred } from './errors/catalog.js';
import { storeUpload } from './domain/uploads.js';
import type { ChatUser, Realm } from './tables.js';

/** Where the endpoint is mounted (Zulip's nginx sends /api/v1/tus/ to tusd). */
export const TUS_PATH = '/api/v1/tus';
/** How long an unfinished upload is kept after its creation. */
export const TUS_EXPIRY_MS = 24 * 60 * 60 * 1000;
/** How often the sweep removes expired uploads. */
const SWEEP_EVERY_MS = 10 * 60 * 1000;
/** Per user: unfinished uploads at once, and the bytes they may declare together (at least one largest upload). */
export const TUS_BOUNDS = { uploadsPerUser: 20, bytesPerUser: 4 * 1024 * 1024 * 1024 } as const;
/** The metadata keys Keel keeps in an upload's info (the client's own keys of those names are replaced). */
const OWNER_KEY = 'keel_owner';

/**
 * Finds who sends a tus request, one kind of credentials each: the user, undefined when the request
 * carries none of its kind (or carries bad ones: the next authenticator is asked, as Zulip falls back
 * from the API key to the session). The API key (HTTP Basic in the Authorization header) is the only
 * one so far; a browser session cookie (issue 18) is another entry of the list given to TusEndpoint.
 */
export type TusAuthenticator = (req: IncomingMessage, realm: Realm) => Promise<ChatUser | undefined>;

/** What the endpoint keeps of an unfinished upload, rebuilt from the staging directory at start. */
interface Pending {
  realmId: number;
  userId: number;
  size: number;
  createdMs: number;
}

/** What Keel reads of the library's upload (its Upload class comes from @tus/utils, no direct dependency). */
interface Upload {
  id: string;
  metadata?: Record<string, string | null>;
}

/** One POST's creation: who asks, the declared size, and the id the library gave. */
interface Creation {
  who: { realm: Realm; user: ChatUser };
  size: number;
  id?: string;
}

interface Refusal {
  status_code: number;
  body: string;
}

/** tusd's refusal body: JSON with a message (uppy shows it), from a catalog entry. */
function refusal(err: ChatError): Refusal {
  return { status_code: err.status, body: JSON.stringify({ message: err.message }) };
}

export class TusEndpoint {
  private readonly services: ChatServices;
  private readonly dir: string;
  private readonly realmOf: (host: string | undefined) => Realm | Promise<Realm>;
  private readonly authenticators: readonly TusAuthenticator[];
  private readonly store: TusFileStore;
  private readonly server: TusServer;
  private readonly pending = new Map<string, Pending>();
  /** Uploads whose last byte is being stored: a second finisher is refused. */
  private readonly finishing = new Set<string>();
  /** Uploads stored as attachments whose staging copy is still to be removed. */
  private readonly stored = new Set<string>();
  /** The creations in progress, by their node request. */
  private readonly creations = new WeakMap<IncomingMessage, Creation>();
  private sweeper: NodeJS.Timeout | undefined;
  /** Resolves once the staging directory has been read (and swept) at start. */
  readonly ready: Promise<void>;

  constructor(services: ChatServices, dir: string, realmOf: (host: string | undefined) => Realm | Promise<Realm>, authenticators: readonly TusAuthenticator[]) {
    this.services = services;
    this.dir = dir;
    this.realmOf = realmOf;
    this.authenticators = authenticators;
    fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    this.store = new TusFileStore({ directory: dir, expirationPeriodInMilliseconds: TUS_EXPIRY_MS });
    this.server = new TusServer({
      path: TUS_PATH,
      datastore: this.store,
      // Relative: the client resolves it against the URL it created the upload at (no Host trusted).
      relativeLocation: true,
      // 32 random hex characters: unguessable, and no '/' (the id is one path segment).
      namingFunction: () => randomBytes(16).toString('hex'),
      onUploadCreate: async (req, upload) => this.created(req, upload),
      onUploadFinish: (_req, upload) => this.finish(upload),
    });
    this.ready = this.load().catch((err: unknown) => {
      services.log.error('tus uploads could not be listed', { error: (err as Error).stack });
    });
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  /** Whether the request target is the endpoint's (the collection or one upload). */
  static owns(url: string | undefined): boolean {
    return url !== undefined && (url === TUS_PATH || url.startsWith(`${TUS_PATH}/`) || url.startsWith(`${TUS_PATH}?`));
  }

  /** Stops the sweep (the staging directory stays: unfinished uploads resume after a restart). */
  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Answers one request to the endpoint. Never rejects. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      await this.ready;
      const method = req.method ?? '';
      // Downloads are not served (Zulip runs tusd with -disable-download): the file is an attachment.
      if (method === 'GET') return this.refuse(req, res, { status_code: 404, body: 'Not found\n' });
      // Discovery (OPTIONS) needs no credentials, as tusd's.
      if (method !== 'OPTIONS') {
        const who = await this.authenticate(req);
        if (!who) return this.refuse(req, res, refusal(tusUnauthenticated()));
        const pre = method === 'POST' ? this.checkCreation(req, who) : this.checkOwner(req, who.user);
        if (pre) return this.refuse(req, res, pre);
        if (method === 'POST') {
          // Kept until the creation answers; dropped again if it failed (no upload info written).
          const id = await this.createWithOwner(req, res, who);
          if (id && !(await this.exists(id))) this.pending.delete(id);
          if (id) await this.removeStored(id);
          return;
        }
      }
      await this.server.handle(req, res);
      const id = this.idOf(req.url);
      if (id && method === 'DELETE' && res.statusCode === 204) this.pending.delete(id);
      if (id && method === 'PATCH') await this.removeStored(id);
    } catch (err) {
      this.services.log.error('tus request failed', { method: req.method, path: req.url, error: (err as Error).stack });
      if (!res.headersSent) this.refuse(req, res, { status_code: 500, body: JSON.stringify({ message: 'Internal server error' }) });
      else res.destroy();
    }
  }

  /** The realm by Host, then the first authenticator that knows the caller; undefined when none does. */
  private async authenticate(req: IncomingMessage): Promise<{ realm: Realm; user: ChatUser } | undefined> {
    let realm: Realm;
    try {
      const r = this.realmOf(req.headers.host);
      realm = r instanceof Promise ? await r : r;
    } catch (err) {
      if (err instanceof ChatError) return undefined;
      throw err;
    }
    for (const authenticate of this.authenticators) {
      const user = await authenticate(req, realm);
      if (user) return { realm, user };
    }
    return undefined;
  }

  /** Zulip's pre-create hook, and Keel's bounds: a refusal, or undefined when the upload may be made. */
  private checkCreation(req: IncomingMessage, who: { realm: Realm; user: ChatUser }): Refusal | undefined {
    const length = req.headers['upload-length'] as string | undefined;
    // No length at all is tus's own 400 (the library answers it); a deferred one Zulip refuses.
    if (length === undefined) return req.headers['upload-defer-length'] !== undefined ? refusal(tusSizeDeferred()) : undefined;
    if (!/^[0-9]+$/.test(length)) return undefined;
    const size = Number(length);
    const limitMib = this.services.maxFileUploadMib;
    if (size > limitMib * 1024 * 1024) return refusal(tusUploadTooLarge({ max_file_size: limitMib }));
    let count = 0;
    let bytes = 0;
    for (const p of this.pending.values()) {
      if (p.userId !== who.user.id) continue;
      count++;
      bytes += p.size;
    }
    if (count >= TUS_BOUNDS.uploadsPerUser) return refusal(tusTooManyUploads({ limit: TUS_BOUNDS.uploadsPerUser }));
    const byteBound = Math.max(TUS_BOUNDS.bytesPerUser, limitMib * 1024 * 1024);
    if (bytes + size > byteBound) return refusal(tusTooManyBytes({ limit_mib: Math.floor(byteBound / 1024 / 1024) }));
    return undefined;
  }

  /** An upload of someone else (or none) is not found, as tusd answers an unknown id. */
  private checkOwner(req: IncomingMessage, user: ChatUser): Refusal | undefined {
    // A target that is not exactly one upload is none (the library would take its last segment).
    const id = this.idOf(req.url);
    if (id === undefined) return { status_code: 404, body: 'The file for this url was not found\n' };
    const p = this.pending.get(id);
    if (!p || p.userId !== user.id || p.realmId !== user.realm_id) return { status_code: 404, body: 'The file for this url was not found\n' };
    if (this.finishing.has(id) && req.method !== 'HEAD') return refusal(tusFinishing());
    return undefined;
  }

  /** Creation through the library, the owner recorded in the upload's info; the new id, if one was made. */
  private async createWithOwner(req: IncomingMessage, res: ServerResponse, who: { realm: Realm; user: ChatUser }): Promise<string | undefined> {
    const creation: Creation = { who, size: Number(req.headers['upload-length']) };
    this.creations.set(req, creation);
    try {
      await this.server.handle(req, res);
    } finally {
      this.creations.delete(req);
    }
    return creation.id;
  }

  /** The library's creation hook: the upload is the caller's (found by the node request under the library's). */
  private created(req: unknown, upload: Upload): { metadata: Record<string, string | null> } {
    const node = (req as { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req;
    const creation = node && this.creations.get(node);
    if (!creation) throw refusal(tusUnauthenticated());
    const { realm, user } = creation.who;
    creation.id = upload.id;
    this.pending.set(upload.id, { realmId: realm.id, userId: user.id, size: creation.size, createdMs: this.services.clock.now() });
    return { metadata: { ...upload.metadata, [OWNER_KEY]: `${realm.id}:${user.id}` } };
  }

  /** Zulip's pre-finish hook: the file becomes an attachment; the answer names its URL. */
  private async finish(upload: Upload): Promise<{ status_code: number; headers: Record<string, string>; body: string }> {
    const p = this.pending.get(upload.id);
    if (!p) throw { status_code: 404, body: 'The file for this url was not found\n' };
    if (this.finishing.has(upload.id)) throw refusal(tusFinishing());
    this.finishing.add(upload.id);
    try {
      const { db } = this.services;
      const realm = await db.kysely.selectFrom('realms').selectAll().where('id', '=', p.realmId).executeTakeFirst();
      const user = await db.kysely.selectFrom('chat_users').selectAll().where('id', '=', p.userId).executeTakeFirst();
      if (!realm || !user || user.is_active !== 1) throw refusal(tusUnauthenticated());
      const meta = upload.metadata ?? {};
      const given = meta.filename ?? '';
      // What clients can save as (Zulip's rule); the path_id takes its sanitised form.
      const filename = given === '' || given === '.' || given === '..' ? 'uploaded-file' : given;
      const body = fs.createReadStream(path.join(this.dir, upload.id));
      const stored = await storeUpload(this.services, realm, user, {
        name: filename,
        contentType: meta.filetype || null,
        body,
        maxBytes: this.services.maxFileUploadMib * 1024 * 1024,
      });
      // The answer acknowledges the attachment: it leaves once the row is durable.
      await db.synced();
      // Its staging copy is removed once the library has answered (it reads the info until then).
      this.pending.delete(upload.id);
      this.stored.add(upload.id);
      return { status_code: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ url: stored.url, filename }) };
    } finally {
      this.finishing.delete(upload.id);
    }
  }

  /** Removes the staging copy of an upload stored as an attachment by this request. */
  private async removeStored(id: string): Promise<void> {
    if (!this.stored.delete(id)) return;
    await this.store.remove(id).catch(() => {});
  }

  /** The upload id of a request target (its one segment after the collection), else undefined. */
  private idOf(url: string | undefined): string | undefined {
    if (!url) return undefined;
    const rest = url.slice(TUS_PATH.length).split('?')[0];
    const m = /^\/([0-9a-f]{32})\/?$/.exec(rest);
    return m ? m[1] : undefined;
  }

  private async exists(id: string): Promise<boolean> {
    try {
      await fsp.access(path.join(this.dir, `${id}.json`));
      return true;
    } catch {
      return false;
    }
  }

  /** A refusal in tusd's shape, before the library saw the request; the unread body is not waited for. */
  private refuse(req: IncomingMessage, res: ServerResponse, r: Refusal): void {
    const json = r.body.startsWith('{');
    const headers: Record<string, string | number> = {
      'tus-resumable': '1.0.0',
      'content-type': json ? 'application/json' : 'text/plain; charset=utf-8',
      'content-length': Buffer.byteLength(r.body),
    };
    if (!req.complete && (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined)) {
      res.shouldKeepAlive = false;
      req.resume();
    }
    res.writeHead(r.status_code, headers);
    res.end(r.body);
  }

  /** The unfinished uploads the staging directory holds (after a restart), expired ones removed first. */
  private async load(): Promise<void> {
    await this.sweep();
    for (const name of await fsp.readdir(this.dir)) {
      if (!name.endsWith('.json')) continue;
      const id = name.slice(0, -5);
      try {
        const info = JSON.parse(await fsp.readFile(path.join(this.dir, name), 'utf8')) as { size?: number; creation_date?: string; metadata?: Record<string, string> };
        const [realmId, userId] = (info.metadata?.[OWNER_KEY] ?? '').split(':').map(Number);
        if (!Number.isInteger(realmId) || !Number.isInteger(userId) || typeof info.size !== 'number') {
          await this.store.remove(id).catch(() => {});
          continue;
        }
        this.pending.set(id, { realmId, userId, size: info.size, createdMs: Date.parse(info.creation_date ?? '') || this.services.clock.now() });
      } catch {
        await this.store.remove(id).catch(() => {});
      }
    }
  }

  /** Removes the uploads past their expiry (their bytes and info), and forgets them. */
  async sweep(): Promise<number> {
    const now = this.services.clock.now();
    let removed = 0;
    for (const [id, p] of this.pending) {
      if (p.createdMs + TUS_EXPIRY_MS > now || this.finishing.has(id)) continue;
      this.pending.delete(id);
      await this.store.remove(id).catch(() => {});
      removed++;
    }
    // Files the library itself finds expired (by the wall clock), the index not knowing them.
    removed += await this.store.deleteExpired().catch(() => 0);
    return removed;
  }
}

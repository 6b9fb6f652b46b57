// `keel admin import-realm FILE --subdomain NAME`: reads an export (write.ts) back into a NEW realm,
// as Zulip's import_realm.py does: every id is given anew (users, groups, channels, recipients,
// messages, reactions, emoji, uploads) and every reference remapped, upload links in messages
// rewritten to the new path ids, and no password or API key carried (the export has none): every
// user gets a new API key and no password, so people sign in again by a password reset or an
// administrator's new credentials. Everything is checked and written in one transaction; the
// files are copied into the file store first and removed again if the import fails.
import { createReadStream } from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import type { Database } from '../../platform/db/database.js';
import type { FileStore } from '../../platform/files/file-store.js';
import { searchText } from '../../platform/db/fulltext.js';
import type { ChatTables } from '../tables.js';
import type { ApiKeySeal } from '../domain/api-keys.js';
import { issueApiKey } from '../domain/api-keys.js';
import { realmBySubdomain } from '../domain/realm.js';
import { placeholderEmail } from '../domain/user-rules.js';
import { directRecipient } from '../domain/messages.js';
import { BOUNDS } from '../domain/bounds.js';
import { emojiKey, EXPORT_FORMAT, EXPORT_FORMAT_VERSION, fromZulipFlags } from './write.js';

/** An export that cannot be imported: the reason, for the operator. */
export class ImportError extends Error {}

type Row = Record<string, unknown>;

export interface ImportSummary {
  realmId: number;
  subdomain: string;
  users: number;
  channels: number;
  messages: number;
  reactions: number;
  uploads: number;
  emoji: number;
}

/** Unpacks a tarball into a new temporary directory: regular files and directories only (no links, nothing outside it). */
async function unpack(file: string): Promise<string> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'keel-import-'));
  try {
    await tar.x({ file, cwd: dir, strict: true, filter: (_p, entry) => 'type' in entry && (entry.type === 'File' || entry.type === 'Directory') });
  } catch (err) {
    await fsp.rm(dir, { recursive: true, force: true });
    throw new ImportError(`${file} is not a readable .tar.gz export: ${(err as Error).message}`);
  }
  return dir;
}

/** The export's directory: where realm.json is, at the top or in the one directory there. */
async function exportRoot(dir: string): Promise<string> {
  const has = (d: string) =>
    fsp.stat(path.join(d, 'realm.json')).then(
      (s) => s.isFile(),
      () => false,
    );
  if (await has(dir)) return dir;
  const entries = await fsp.readdir(dir, { withFileTypes: true });
  for (const e of entries) if (e.isDirectory() && (await has(path.join(dir, e.name)))) return path.join(dir, e.name);
  throw new ImportError('the tarball holds no realm.json: not a realm export');
}

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await fsp.readFile(file, 'utf8'));
  } catch (err) {
    throw new ImportError(`${path.basename(file)}: ${(err as Error).message}`);
  }
}

function list(doc: Row, name: string): Row[] {
  const v = doc[name] ?? [];
  if (!Array.isArray(v)) throw new ImportError(`${name} is not a list`);
  return v as Row[];
}

/** old id -> new id, refusing a reference to something the export does not hold. */
class IdMap {
  private readonly map = new Map<number, number>();
  private readonly what: string;
  constructor(what: string) {
    this.what = what;
  }
  set(oldId: unknown, newId: number): void {
    this.map.set(Number(oldId), newId);
  }
  get(oldId: unknown): number {
    const v = this.map.get(Number(oldId));
    if (v === undefined) throw new ImportError(`the export refers to ${this.what} ${String(oldId)}, which it does not hold`);
    return v;
  }
  maybe(oldId: unknown): number | null {
    return oldId === null || oldId === undefined ? null : this.get(oldId);
  }
  has(oldId: unknown): boolean {
    return this.map.has(Number(oldId));
  }
}

/** A row's columns without those the import gives anew. */
function columns(row: Row, drop: string[]): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) if (!drop.includes(k)) out[k] = v;
  return out;
}

/** Group-setting columns (a group id, or direct members and subgroups): every `can_*` column, and the realm's direct_message_*_group. */
const isGroupSetting = (column: string) => column.startsWith('can_') || (column.startsWith('direct_message_') && column.endsWith('_group'));

function remapGroupSetting(json: unknown, users: IdMap, groups: IdMap): string | null {
  if (json === null || json === undefined) return null;
  const v = JSON.parse(String(json)) as number | { direct_members: number[]; direct_subgroups: number[] };
  if (typeof v === 'number') return JSON.stringify(groups.get(v));
  return JSON.stringify({ direct_members: v.direct_members.map((u) => users.get(u)), direct_subgroups: v.direct_subgroups.map((g) => groups.get(g)) });
}

function remapGroupSettings(row: Row, users: IdMap, groups: IdMap): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) if (isGroupSetting(k) && typeof v === 'string') out[k] = remapGroupSetting(v, users, groups);
  return out;
}

export interface ImportTarget {
  db: Database<ChatTables>;
  files: FileStore;
  sealer: ApiKeySeal;
  nowMs: number;
}

/** Imports the export at `file` as a new realm of `subdomain`, its addresses under `emailHost`. */
export async function importRealm(target: ImportTarget, file: string, subdomain: string, emailHost: string): Promise<ImportSummary> {
  const unpacked = await unpack(file);
  const written: string[] = [];
  try {
    const root = await exportRoot(unpacked);
    const doc = (await readJson(path.join(root, 'realm.json'))) as Row;
    const meta = doc.keel_export as Row | undefined;
    if (!meta || meta.format !== EXPORT_FORMAT) throw new ImportError('realm.json has no keel_export entry: only exports made by Keel can be imported');
    if (meta.version !== EXPORT_FORMAT_VERSION) throw new ImportError(`the export's format version ${String(meta.version)} is not ${EXPORT_FORMAT_VERSION}`);
    const [realmRow] = list(doc, 'zerver_realm');
    if (!realmRow) throw new ImportError('realm.json holds no realm');
    const oldRealmId = Number(realmRow.id);
    const oldHost = String(realmRow.email_host);
    const users = list(doc, 'zerver_userprofile');
    const streams = list(doc, 'zerver_stream');
    const groups = list(doc, 'zerver_usergroup');
    if (users.length > BOUNDS.usersPerRealm || streams.length > BOUNDS.channelsPerRealm || groups.length > BOUNDS.groupsPerRealm)
      throw new ImportError('the export holds more than a Keel realm may (domain/bounds.ts)');
    const attachmentDoc = ((await fsp.stat(path.join(root, 'attachment.json')).catch(() => null)) ? await readJson(path.join(root, 'attachment.json')) : {}) as Row;
    const messageFiles = (await fsp.readdir(root)).filter((n) => /^messages-\d{6}\.json$/.test(n)).sort();
    const emojiRecords = ((await fsp.stat(path.join(root, 'emoji', 'records.json')).catch(() => null)) ? await readJson(path.join(root, 'emoji', 'records.json')) : []) as Row[];

    // Before the transaction: the subdomain must be free (checked again inside it).
    if (await realmBySubdomain(target.db.kysely, subdomain)) throw new ImportError(`the subdomain "${subdomain}" is in use`);

    // Upload and emoji files first, under their new keys: a row is never without its bytes.
    const newPathId = (oldPathId: string) => (oldPathId.startsWith(`${oldRealmId}/`) ? oldPathId.slice(String(oldRealmId).length + 1) : oldPathId);
    const attachments = list(attachmentDoc, 'zerver_attachment');
    const summary = await target.db.transaction(async (trx) => {
      if (await realmBySubdomain(trx, subdomain)) throw new ImportError(`the subdomain "${subdomain}" is in use`);
      const realm = await trx
        .insertInto('realms')
        .values({
          ...(columns(realmRow, ['id', 'string_id', 'email_host', 'deactivated']) as object),
          ...Object.fromEntries(
            Object.keys(realmRow)
              .filter(isGroupSetting)
              .map((k) => [k, null]),
          ),
          string_id: subdomain,
          email_host: emailHost,
        } as never)
        .returningAll()
        .executeTakeFirstOrThrow();
      const realmId = realm.id;
      const uploadKey = (oldPathId: string) => `${realmId}/${newPathId(oldPathId)}`;
      const rewrite = (text: string) => text.split(`/user_uploads/${oldRealmId}/`).join(`/user_uploads/${realmId}/`);

      // Groups (settings once users exist), then users.
      const groupMap = new IdMap('user group');
      for (const g of groups) {
        const made = await trx
          .insertInto('user_groups')
          .values({
            ...(columns(g, ['id', 'creator_id']) as object),
            ...Object.fromEntries(
              Object.keys(g)
                .filter(isGroupSetting)
                .map((k) => [k, null]),
            ),
            realm_id: realmId,
            creator_id: null,
          } as never)
          .returning('id')
          .executeTakeFirstOrThrow();
        groupMap.set(g.id, made.id);
      }
      const userMap = new IdMap('user');
      const bots: [Row, number][] = [];
      for (const u of users) {
        const key = issueApiKey(target.sealer);
        const moveHost = (email: string) => (email.toLowerCase().endsWith(`@${oldHost.toLowerCase()}`) ? `${email.slice(0, email.length - oldHost.length)}${emailHost}` : email);
        const delivery = u.is_bot === 1 ? moveHost(String(u.delivery_email)) : String(u.delivery_email);
        const made = await trx
          .insertInto('chat_users')
          .values({
            ...(columns(u, ['id', 'realm_id', 'email', 'email_lower', 'delivery_email', 'bot_owner_id']) as object),
            realm_id: realmId,
            email: delivery,
            email_lower: delivery.toLowerCase(),
            delivery_email: delivery,
            bot_owner_id: null,
            password_hash: null,
            api_key_hash: key.api_key_hash,
            api_key_sealed: key.api_key_sealed,
          } as never)
          .returning('id')
          .executeTakeFirstOrThrow();
        userMap.set(u.id, made.id);
        // A hidden address shows as the placeholder, made from the new id and host.
        if (String(u.email) !== String(u.delivery_email)) {
          const placeholder = placeholderEmail(made.id, emailHost);
          await trx.updateTable('chat_users').set({ email: placeholder, email_lower: placeholder.toLowerCase() }).where('id', '=', made.id).execute();
        }
        if (u.bot_owner_id !== null && u.bot_owner_id !== undefined) bots.push([u, made.id]);
      }
      for (const [u, id] of bots)
        await trx
          .updateTable('chat_users')
          .set({ bot_owner_id: userMap.get(u.bot_owner_id) })
          .where('id', '=', id)
          .execute();
      for (const g of groups) {
        const settings = remapGroupSettings(g, userMap, groupMap);
        const creator = userMap.maybe(g.creator_id ?? null);
        await trx
          .updateTable('user_groups')
          .set({ ...settings, creator_id: creator } as never)
          .where('id', '=', groupMap.get(g.id))
          .execute();
      }
      for (const m of list(doc, 'zerver_usergroupmembership'))
        await trx
          .insertInto('user_group_members')
          .values({ group_id: groupMap.get(m.group_id), user_id: userMap.get(m.user_id) })
          .execute();
      for (const m of list(doc, 'zerver_groupgroupmembership'))
        await trx
          .insertInto('user_group_subgroups')
          .values({ group_id: groupMap.get(m.group_id), subgroup_id: groupMap.get(m.subgroup_id) })
          .execute();
      const realmSettings = remapGroupSettings(realmRow, userMap, groupMap);
      if (Object.keys(realmSettings).length)
        await trx
          .updateTable('realms')
          .set(realmSettings as never)
          .where('id', '=', realmId)
          .execute();

      // Recipients: channels' made with them; direct conversations' keys name the new user ids.
      const recipientMap = new IdMap('recipient');
      for (const r of list(doc, 'zerver_recipient')) {
        if (r.kind === 'direct')
          recipientMap.set(
            r.id,
            await directRecipient(
              trx,
              String(r.direct_key)
                .split(',')
                .map((id) => userMap.get(id)),
            ),
          );
        else recipientMap.set(r.id, (await trx.insertInto('recipients').values({ kind: 'stream', direct_key: null }).returning('id').executeTakeFirstOrThrow()).id);
      }
      const streamMap = new IdMap('channel');
      for (const s of streams) {
        const made = await trx
          .insertInto('streams')
          .values({
            ...(columns(s, ['id']) as object),
            ...remapGroupSettings(s, userMap, groupMap),
            realm_id: realmId,
            recipient_id: recipientMap.get(s.recipient_id),
            creator_id: userMap.maybe(s.creator_id),
          } as never)
          .returning('id')
          .executeTakeFirstOrThrow();
        streamMap.set(s.id, made.id);
      }
      for (const s of list(doc, 'zerver_subscription')) {
        await trx
          .insertInto('subscriptions')
          .values({ ...(columns(s, ['id']) as object), user_id: userMap.get(s.user_id), stream_id: streamMap.get(s.stream_id) } as never)
          .execute();
      }
      for (const d of list(doc, 'zerver_defaultstream'))
        await trx
          .insertInto('default_streams')
          .values({ realm_id: realmId, stream_id: streamMap.get(d.stream_id) })
          .execute();
      for (const l of list(doc, 'zerver_realmfilter')) {
        await trx
          .insertInto('realm_linkifiers')
          .values({ ...(columns(l, ['id']) as object), realm_id: realmId } as never)
          .execute();
      }
      for (const d of list(doc, 'zerver_realmuserdefault'))
        await trx
          .insertInto('realm_user_settings_defaults')
          .values({ realm_id: realmId, settings: String(d.settings) })
          .execute();
      const emojiMap = new IdMap('custom emoji');
      for (const e of list(doc, 'zerver_realmemoji')) {
        const made = await trx
          .insertInto('realm_emoji')
          .values({ ...(columns(e, ['id']) as object), realm_id: realmId, author_id: userMap.maybe(e.author_id) } as never)
          .returning('id')
          .executeTakeFirstOrThrow();
        emojiMap.set(e.id, made.id);
      }

      // Messages in their order (ids grow as they did), with their receivers' flags.
      const messageMap = new IdMap('message');
      const oldIds: number[] = [];
      const newIds: number[] = [];
      let messageCount = 0;
      for (const name of messageFiles) {
        const chunk = (await readJson(path.join(root, name))) as Row;
        for (const m of list(chunk, 'zerver_message')) {
          const rendered = rewrite(String(m.rendered_content));
          const history = m.edit_history === null || m.edit_history === undefined ? null : remapHistory(rewrite(String(m.edit_history)), userMap, streamMap);
          const made = await trx
            .insertInto('messages')
            .values({
              ...(columns(m, ['id', 'search_tsv']) as object),
              realm_id: realmId,
              sender_id: userMap.get(m.sender_id),
              recipient_id: recipientMap.get(m.recipient_id),
              stream_id: streamMap.maybe(m.stream_id),
              content: rewrite(String(m.content)),
              rendered_content: rendered,
              search_text: searchText(String(m.topic), rendered),
              edit_history: history,
            } as never)
            .returning('id')
            .executeTakeFirstOrThrow();
          messageMap.set(m.id, made.id);
          oldIds.push(Number(m.id));
          newIds.push(made.id);
          messageCount++;
        }
        for (const um of list(chunk, 'zerver_usermessage')) {
          await trx
            .insertInto('user_messages')
            .values({ user_id: userMap.get(um.user_profile), message_id: messageMap.get(um.message), flags: fromZulipFlags(Number(um.flags_mask)) })
            .execute();
        }
      }
      // A span's bound is "after message N": the newest imported message at or before N.
      const atOrBefore = (oldId: number): number => {
        let lo = 0;
        let hi = oldIds.length - 1;
        let best = 0;
        while (lo <= hi) {
          const mid = (lo + hi) >> 1;
          if (oldIds[mid] <= oldId) {
            best = newIds[mid];
            lo = mid + 1;
          } else hi = mid - 1;
        }
        return best;
      };
      for (const sp of list(doc, 'keel_subscription_span')) {
        await trx
          .insertInto('subscription_spans')
          .values({
            user_id: userMap.get(sp.user_id),
            stream_id: streamMap.get(sp.stream_id),
            after_message_id: atOrBefore(Number(sp.after_message_id)),
            until_message_id: sp.until_message_id === null ? null : atOrBefore(Number(sp.until_message_id)),
          })
          .execute();
      }
      let reactionCount = 0;
      for (const r of list(doc, 'zerver_reaction')) {
        if (!messageMap.has(r.message_id)) continue;
        const code = r.reaction_type === 'realm_emoji' ? String(emojiMap.get(r.emoji_code)) : String(r.emoji_code);
        await trx
          .insertInto('reactions')
          .values({ message_id: messageMap.get(r.message_id), user_id: userMap.get(r.user_id), reaction_type: String(r.reaction_type), emoji_code: code, emoji_name: String(r.emoji_name) })
          .execute();
        reactionCount++;
      }

      // Uploads: the files under their new path ids, then the rows and their links.
      const attachmentMap = new IdMap('upload');
      for (const a of attachments) {
        const oldPath = String(a.path_id);
        const source = path.join(root, 'uploads', ...oldPath.split('/'));
        if (!source.startsWith(path.join(root, 'uploads') + path.sep)) throw new ImportError(`bad upload path ${oldPath}`);
        const key = uploadKey(oldPath);
        await target.files.put(key, createReadStream(source));
        written.push(key);
        const made = await trx
          .insertInto('attachments')
          .values({ ...(columns(a, ['id']) as object), realm_id: realmId, owner_id: userMap.get(a.owner_id), path_id: key } as never)
          .returning('id')
          .executeTakeFirstOrThrow();
        attachmentMap.set(a.id, made.id);
      }
      for (const l of list(attachmentDoc, 'zerver_attachment_messages')) {
        if (!messageMap.has(l.message_id)) continue;
        await trx
          .insertInto('attachment_messages')
          .values({ attachment_id: attachmentMap.get(l.attachment_id), message_id: messageMap.get(l.message_id) })
          .execute();
      }
      let emojiFiles = 0;
      for (const rec of emojiRecords) {
        const source = path.join(root, 'emoji', ...String(rec.path).split('/'));
        if (!source.startsWith(path.join(root, 'emoji') + path.sep)) throw new ImportError(`bad emoji path ${String(rec.path)}`);
        const key = emojiKey(realmId, String(rec.file_name));
        await target.files.put(key, createReadStream(source));
        written.push(key);
        emojiFiles++;
      }
      return {
        realmId,
        subdomain,
        users: users.length,
        channels: streams.length,
        messages: messageCount,
        reactions: reactionCount,
        uploads: attachments.length,
        emoji: emojiFiles,
      };
    });
    return summary;
  } catch (err) {
    for (const key of written) await target.files.delete(key).catch(() => {});
    if (err instanceof ImportError) throw err;
    throw new ImportError(`the import failed, nothing was imported: ${(err as Error).message}`);
  } finally {
    await fsp.rm(unpacked, { recursive: true, force: true }).catch(() => {});
  }
}

/** A message's edit history with its user and channel ids remapped. */
function remapHistory(json: string, users: IdMap, streams: IdMap): string {
  const entries = JSON.parse(json) as Row[];
  return JSON.stringify(
    entries.map((e) => {
      const out: Row = { ...e };
      if ('user_id' in e) out.user_id = users.maybe(e.user_id);
      for (const k of ['prev_stream', 'stream']) if (k in e) out[k] = streams.get(e[k]);
      return out;
    }),
  );
}

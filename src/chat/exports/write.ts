// Writes one realm's data export: a directory in Zulip's documented layout (realm.json,
// attachment.json, messages-000001.json ..., uploads/records.json with the files, avatars/,
// emoji/), packed as a .tar.gz whose one top directory is the export's name. Table names are
// Zulip's where Keel has the table (zerver_userprofile, zerver_stream ...); the rows are Keel's
// own columns, so that `keel admin import-realm` (read.ts) reads them back exactly. docs/chat.md
// describes the format and what is and is not carried.
import { createReadStream, createWriteStream } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import type { Database } from '../../platform/db/database.js';
import type { FileStore } from '../../platform/files/file-store.js';
import type { ChatTables } from '../tables.js';
import { FLAG } from '../domain/flags.js';
import { consentingUserIds, EXPORT_TYPE } from '../domain/realm-exports.js';

/** The format's name and version in realm.json's keel_export entry; read.ts refuses anything else. */
export const EXPORT_FORMAT = 'keel-realm-export';
export const EXPORT_FORMAT_VERSION = 1;
/** Messages per messages-NNNNNN.json file (Zulip's MESSAGE_BATCH_CHUNK_SIZE). */
export const MESSAGES_PER_FILE = 1000;

/** Keel's flag bits as Zulip's UserMessage flags bit field numbers them (has_alert_word and historical differ). */
const ZULIP_FLAG_BITS: [number, number][] = [
  [FLAG.read, 1],
  [FLAG.starred, 2],
  [FLAG.collapsed, 4],
  [FLAG.mentioned, 8],
  [FLAG.stream_wildcard_mentioned, 16],
  [FLAG.topic_wildcard_mentioned, 32],
  [FLAG.has_alert_word, 1024],
  [FLAG.historical, 2048],
];

export function toZulipFlags(keel: number): number {
  let out = 0;
  for (const [k, z] of ZULIP_FLAG_BITS) if (keel & k) out |= z;
  return out;
}

export function fromZulipFlags(zulip: number): number {
  let out = 0;
  for (const [k, z] of ZULIP_FLAG_BITS) if (zulip & z) out |= k;
  return out;
}

/** Where a custom emoji's image is in the file store (the path of its source_url under /user_avatars/). */
export function emojiKey(realmId: number, fileName: string): string {
  return `${realmId}/emoji/images/${fileName}`;
}

export interface ExportSources {
  db: Database<ChatTables>;
  files: FileStore;
  clock: { now(): number };
}

export interface ExportSummary {
  users: number;
  channels: number;
  messages: number;
  uploads: number;
  emoji: number;
}

function withoutKeys(row: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) if (!keys.includes(k)) out[k] = v;
  return out;
}

async function writeJson(file: string, value: unknown): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await fsp.writeFile(file, JSON.stringify(value, null, 1));
}

/** Copies one file of the store into the export; false when the store has no such file. */
async function copyOut(files: FileStore, key: string, target: string): Promise<boolean> {
  const found = await files.read(key);
  if (!found) return false;
  await fsp.mkdir(path.dirname(target), { recursive: true });
  await pipeline(found.stream, createWriteStream(target));
  return true;
}

/**
 * Writes the export of `realmId` into `dir` (created). A public export (type 1) carries the
 * messages of public channels only; a full export with consent (type 2) adds every message a
 * consenting user (allow_private_data_export) sent or received, as Zulip's does.
 */
export async function writeRealmExport(src: ExportSources, realmId: number, type: number, dir: string): Promise<ExportSummary> {
  const db = src.db.kysely;
  await fsp.mkdir(dir, { recursive: true });
  const realm = await db.selectFrom('realms').selectAll().where('id', '=', realmId).executeTakeFirstOrThrow();
  const users = await db.selectFrom('chat_users').selectAll().where('realm_id', '=', realmId).orderBy('id').execute();
  const userIds = users.map((u) => u.id);
  // Passwords and API keys never leave the server (Zulip's export leaves them out too).
  const profiles = users.map(({ password_hash: _p, api_key_hash: _h, api_key_sealed: _s, ...rest }) => rest);
  const streams = await db.selectFrom('streams').selectAll().where('realm_id', '=', realmId).orderBy('id').execute();
  const streamIds = streams.map((s) => s.id);
  const groups = await db.selectFrom('user_groups').selectAll().where('realm_id', '=', realmId).orderBy('id').execute();
  const groupIds = groups.map((g) => g.id);
  const some = <T>(ids: number[], q: () => Promise<T[]>): Promise<T[]> => (ids.length ? q() : Promise.resolve([]));
  const groupMembers = await some(groupIds, () => db.selectFrom('user_group_members').selectAll().where('group_id', 'in', groupIds).orderBy('group_id').orderBy('user_id').execute());
  const groupSubgroups = await some(groupIds, () => db.selectFrom('user_group_subgroups').selectAll().where('group_id', 'in', groupIds).orderBy('group_id').orderBy('subgroup_id').execute());
  const subscriptions = await some(streamIds, () => db.selectFrom('subscriptions').selectAll().where('stream_id', 'in', streamIds).orderBy('id').execute());
  const spans = await some(streamIds, () => db.selectFrom('subscription_spans').selectAll().where('stream_id', 'in', streamIds).execute());
  const defaultStreams = await db.selectFrom('default_streams').selectAll().where('realm_id', '=', realmId).execute();
  const linkifiers = await db.selectFrom('realm_linkifiers').selectAll().where('realm_id', '=', realmId).orderBy('sort_order').execute();
  const emoji = await db.selectFrom('realm_emoji').selectAll().where('realm_id', '=', realmId).orderBy('id').execute();
  const settingsDefaults = await db.selectFrom('realm_user_settings_defaults').selectAll().where('realm_id', '=', realmId).execute();

  // Which messages: public channels' always; with consent, also whatever a consenting user has.
  const publicStreamIds = new Set(streams.filter((s) => s.invite_only === 0).map((s) => s.id));
  const consenting = type === EXPORT_TYPE.fullWithConsent ? await consentingUserIds(src.db.kysely, realmId) : new Set<number>();
  const consentedMessageIds = new Set<number>();
  if (consenting.size) {
    const ids = [...consenting];
    for (const r of await db.selectFrom('user_messages').select('message_id').where('user_id', 'in', ids).execute()) consentedMessageIds.add(r.message_id);
    for (const r of await db.selectFrom('messages').select('id').where('realm_id', '=', realmId).where('sender_id', 'in', ids).execute()) consentedMessageIds.add(r.id);
  }
  const exported = (m: { id: number; stream_id: number | null }) => (m.stream_id !== null && publicStreamIds.has(m.stream_id)) || consentedMessageIds.has(m.id);

  const recipientIds = new Set(streams.map((s) => s.recipient_id));
  const messageIds: number[] = [];
  let fileNo = 0;
  let after = 0;
  for (;;) {
    const batch = await db.selectFrom('messages').selectAll().where('realm_id', '=', realmId).where('id', '>', after).orderBy('id').limit(MESSAGES_PER_FILE).execute();
    if (!batch.length) break;
    after = batch[batch.length - 1].id;
    const chosen = batch.filter(exported).map(({ search_text: _s, ...m }) => withoutKeys(m as Record<string, unknown>, ['search_tsv']) as typeof m);
    if (!chosen.length) continue;
    const ids = chosen.map((m) => m.id);
    for (const m of chosen) recipientIds.add(m.recipient_id);
    messageIds.push(...ids);
    const userMessages = await db.selectFrom('user_messages').selectAll().where('message_id', 'in', ids).orderBy('message_id').orderBy('user_id').execute();
    fileNo++;
    await writeJson(path.join(dir, `messages-${String(fileNo).padStart(6, '0')}.json`), {
      zerver_message: chosen,
      zerver_usermessage: userMessages.map((um) => ({ user_profile: um.user_id, message: um.message_id, flags_mask: toZulipFlags(um.flags) })),
    });
  }
  const exportedMessages = new Set(messageIds);
  const reactions: unknown[] = [];
  for (let i = 0; i < messageIds.length; i += MESSAGES_PER_FILE) {
    const ids = messageIds.slice(i, i + MESSAGES_PER_FILE);
    reactions.push(...(await db.selectFrom('reactions').selectAll().where('message_id', 'in', ids).orderBy('id').execute()));
  }
  const recipients = recipientIds.size
    ? await db
        .selectFrom('recipients')
        .selectAll()
        .where('id', 'in', [...recipientIds])
        .orderBy('id')
        .execute()
    : [];

  // Uploads: those the exported messages link, and (with consent) every file of a consenting user.
  const attachments = await db.selectFrom('attachments').selectAll().where('realm_id', '=', realmId).orderBy('id').execute();
  const links = attachments.length
    ? await db
        .selectFrom('attachment_messages')
        .selectAll()
        .where(
          'attachment_id',
          'in',
          attachments.map((a) => a.id),
        )
        .execute()
    : [];
  const linked = new Set(links.filter((l) => exportedMessages.has(l.message_id)).map((l) => l.attachment_id));
  const chosenAttachments: typeof attachments = [];
  const uploadRecords: unknown[] = [];
  for (const a of attachments.filter((a) => linked.has(a.id) || consenting.has(a.owner_id))) {
    // A row whose file is gone from the store is left out (the import would have no bytes for it).
    if (!(await copyOut(src.files, a.path_id, path.join(dir, 'uploads', ...a.path_id.split('/'))))) continue;
    chosenAttachments.push(a);
    uploadRecords.push({ path: a.path_id, s3_path: a.path_id, realm_id: realmId, user_profile_id: a.owner_id, content_type: a.content_type, size: a.size, last_modified: a.create_time });
  }
  const emojiRecords: unknown[] = [];
  for (const e of emoji) {
    const key = emojiKey(realmId, e.file_name);
    if (!(await copyOut(src.files, key, path.join(dir, 'emoji', ...key.split('/'))))) continue;
    emojiRecords.push({ path: key, s3_path: key, realm_id: realmId, user_profile_id: e.author_id, file_name: e.file_name, name: e.name, id: e.id, deactivated: e.deactivated === 1 });
  }

  await writeJson(path.join(dir, 'realm.json'), {
    keel_export: { format: EXPORT_FORMAT, version: EXPORT_FORMAT_VERSION, export_type: type, exported_at: src.clock.now() / 1000, realm_id: realmId },
    zerver_realm: [realm],
    zerver_userprofile: profiles,
    zerver_usergroup: groups,
    zerver_usergroupmembership: groupMembers,
    zerver_groupgroupmembership: groupSubgroups,
    zerver_recipient: recipients,
    zerver_stream: streams,
    zerver_subscription: subscriptions,
    keel_subscription_span: spans,
    zerver_defaultstream: defaultStreams,
    zerver_realmfilter: linkifiers,
    zerver_realmemoji: emoji,
    zerver_reaction: reactions,
    zerver_realmuserdefault: settingsDefaults,
  });
  const chosenIds = new Set(chosenAttachments.map((a) => a.id));
  await writeJson(path.join(dir, 'attachment.json'), {
    zerver_attachment: chosenAttachments,
    zerver_attachment_messages: links.filter((l) => chosenIds.has(l.attachment_id) && exportedMessages.has(l.message_id)),
  });
  await writeJson(path.join(dir, 'uploads', 'records.json'), uploadRecords);
  await writeJson(path.join(dir, 'emoji', 'records.json'), emojiRecords);
  // Keel keeps no avatar files of its own yet (avatars are Gravatar's): the directory is there, empty.
  await writeJson(path.join(dir, 'avatars', 'records.json'), []);
  return { users: userIds.length, channels: streams.length, messages: messageIds.length, uploads: uploadRecords.length, emoji: emojiRecords.length };
}

/** Packs `dir` (its base name the tarball's one top directory) into a gzipped tarball at `file`. */
export async function packExport(dir: string, file: string): Promise<void> {
  await tar.c({ gzip: true, portable: true, cwd: path.dirname(dir), file }, [path.basename(dir)]);
}

/** A readable stream of a tarball on disk, for the file store. */
export function tarballStream(file: string) {
  return createReadStream(file);
}

// Uploaded images, as Zulip's views take them: custom emoji (POST /realm/emoji/{emoji_name}: its
// upload_emoji and check_add_realm_emoji), the user's avatar (POST/DELETE /users/me/avatar), the
// realm's icon (POST/DELETE /realm/icon) and day and night logos (POST/DELETE /realm/logo). The
// multipart body is read by the handler (streamsBody, chat/image-form.ts); the images are made and
// stored before the rows change (domain/images.ts), so a refused image changes nothing, and the
// events (realm_emoji, realm_user update, realm update_dict) follow the commit.
import Type from 'typebox';
import type { Kysely } from 'kysely';
import { defineEndpoint, requireUser, type ChatCall } from '../endpoint.js';
import type { Notice } from '../events/hub.js';
import type { ChatTables } from '../tables.js';
import { activeUsers } from '../events/notices.js';
import { addressIsPublic, avatarSource, avatarUrlFor } from '../domain/users.js';
import {
  adminRequired,
  exactlyOneAvatar,
  exactlyOneIcon,
  exactlyOneLogo,
  missingArgument,
  paramNotBoolean,
  builtInEmojiOverride,
  customEmojiExists,
  emojiNameCharacters,
  emojiNameEnd,
  emojiNameMissing,
  exactlyOneFile,
  insufficientPermission,
  limitReached,
  uploadedFileTooLarge,
} from '../errors.js';
import { readImageOf } from '../image-form.js';
import { avatarsKey, deleteAvatarImages, MAX_IMAGE_FILE_MIB, realmIconUrl, realmLogoUrl, storeAvatarImages, storeEmojiImage, storeRealmImage } from '../domain/images.js';
import { activeRealmEmoji } from '../domain/realm-emoji.js';
import { emojiByName } from '../domain/emoji.js';
import { isAdmin, isGuest } from '../domain/roles.js';
import { realmEmojiNotice } from '../events/realm-notices.js';

const MAX_IMAGE_BYTES = MAX_IMAGE_FILE_MIB * 1024 * 1024;
/** Custom emoji a realm may hold, deactivated ones included (Keel's bound; Zulip has none). */
export const CUSTOM_EMOJI_PER_REALM = 10_000;

/** Zulip's check_valid_emoji_name. */
export function checkEmojiName(name: string): void {
  if (!name) throw emojiNameMissing();
  if (/^[0-9a-z_-]+$/.test(name)) {
    if (/[-_]$/.test(name)) throw emojiNameEnd();
    return;
  }
  throw emojiNameCharacters();
}

export const uploadCustomEmoji = defineEndpoint({
  method: 'POST',
  path: '/realm/emoji/{emoji_name}',
  summary: 'Upload custom emoji',
  auth: 'user',
  streamsBody: true,
  params: Type.Object({ emoji_name: Type.String({ description: 'Spaces become underscores; lower case letters, digits, dashes and underscores, ending in a letter or digit.' }) }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events, files } = call.services;
    const name = p.emoji_name.trim().replaceAll(' ', '_').toLowerCase();
    checkEmojiName(name);
    // Zulip's default can_add_custom_emoji_group (role:members), which Keel does not let realms change.
    if (isGuest(me.role)) throw insufficientPermission();
    if (await activeRealmEmoji(db.kysely, call.realm.id, name)) throw customEmojiExists();
    const upload = await readImageOf(call.request, MAX_IMAGE_BYTES);
    if (upload.files !== 1 || !upload.first) throw exactlyOneFile();
    if (emojiByName(name) && !isAdmin(me.role)) throw builtInEmojiOverride();
    if (upload.first.tooLarge) throw uploadedFileTooLarge({ max_file_size: MAX_IMAGE_FILE_MIB });
    const stored = await storeEmojiImage(files, call.realm.id, upload.first.data, upload.first.contentType);
    try {
      await events.write(
        () =>
          db.transaction(async (trx) => {
            // Added meanwhile under the same name: the later upload loses, as a unique row would.
            if (await activeRealmEmoji(trx, call.realm.id, name)) throw customEmojiExists();
            const held = await trx
              .selectFrom('realm_emoji')
              .select((eb) => eb.fn.countAll<number | string>().as('n'))
              .where('realm_id', '=', call.realm.id)
              .executeTakeFirstOrThrow();
            if (Number(held.n) >= CUSTOM_EMOJI_PER_REALM) throw limitReached({ scope: 'an organization', limit: CUSTOM_EMOJI_PER_REALM, things: 'custom emoji' });
            await trx
              .insertInto('realm_emoji')
              .values({
                realm_id: call.realm.id,
                name,
                author_id: me.id,
                file_name: stored.fileName,
                is_animated: stored.isAnimated ? 1 : 0,
                deactivated: 0,
                date_created: Math.floor(call.services.clock.now() / 1000),
              })
              .execute();
          }),
        () => realmEmojiNotice(db.kysely, call.realm.id),
      );
    } catch (err) {
      const dir = `${call.realm.id}/emoji/images`;
      const keys = [`${dir}/${stored.fileName}`, `${dir}/${stored.fileName}.original`, `${dir}/still/${stored.fileName.replace(/\.[^.]*$/, '')}.png`];
      await Promise.all(keys.map((k) => files.delete(avatarsKey(k)).catch(() => {})));
      throw err;
    }
    return {};
  },
});

/** The one image of an avatar, icon or logo upload: Zulip's count and size checks, with its refusal for a count other than one. */
async function oneImage(call: ChatCall, notOne: () => Error): Promise<{ data: Buffer; contentType: string | undefined; fields: Map<string, string> }> {
  const upload = await readImageOf(call.request, MAX_IMAGE_BYTES);
  if (upload.files !== 1 || !upload.first) throw notOne();
  if (upload.first.tooLarge) throw uploadedFileTooLarge({ max_file_size: MAX_IMAGE_FILE_MIB });
  return { data: upload.first.data, contentType: upload.first.contentType, fields: upload.fields };
}

/** realm_user update of a user's avatar fields to every active user; a client computing gravatars itself gets null for a public address's. */
async function avatarNotice(db: Kysely<ChatTables>, userId: number, realmId: number): Promise<Notice[]> {
  const user = await db.selectFrom('chat_users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
  const viewers = (await activeUsers(db, realmId)).map((v) => v.id);
  const person = (clientGravatar: boolean) => ({
    type: 'realm_user',
    op: 'update',
    person: {
      user_id: user.id,
      avatar_source: avatarSource(user),
      avatar_url: avatarUrlFor(user, clientGravatar),
      avatar_url_medium: avatarUrlFor(user, false, true),
      avatar_version: user.avatar_version,
    },
  });
  const plain = person(false);
  const computed = avatarSource(user) === 'G' && addressIsPublic(user) ? person(true) : plain;
  return [{ type: 'realm_user', userIds: viewers, render: (queue) => (queue.options.clientGravatar ? computed : plain) }];
}

/** Zulip's do_change_avatar_fields: the new path (null: the hash-based avatar), the version one up, the event after the commit. */
async function changeAvatar(call: ChatCall, path: string | null): Promise<string | null> {
  const me = requireUser(call);
  const { db, events, files } = call.services;
  const before = await db.kysely.selectFrom('chat_users').select('avatar_path').where('id', '=', me.id).executeTakeFirstOrThrow();
  await events.write(
    () =>
      db.transaction(async (trx) => {
        await trx
          .updateTable('chat_users')
          .set((eb) => ({ avatar_path: path, avatar_version: eb('avatar_version', '+', 1) }))
          .where('id', '=', me.id)
          .execute();
      }),
    () => avatarNotice(db.kysely, me.id, call.realm.id),
  );
  // The replaced images go (their URLs named the old path, which nothing shows any more).
  if (before.avatar_path && before.avatar_path !== path) await deleteAvatarImages(files, before.avatar_path);
  const after = await db.kysely.selectFrom('chat_users').selectAll().where('id', '=', me.id).executeTakeFirstOrThrow();
  return avatarUrlFor(after, false);
}

export const uploadAvatar = defineEndpoint({
  method: 'POST',
  path: '/users/me/avatar',
  summary: 'Upload avatar',
  auth: 'user',
  streamsBody: true,
  params: Type.Object({}),
  async handler(call) {
    const image = await oneImage(call, exactlyOneAvatar);
    const path = await storeAvatarImages(call.services.files, call.realm.id, image.data, image.contentType);
    try {
      return { avatar_url: await changeAvatar(call, path) };
    } catch (err) {
      await deleteAvatarImages(call.services.files, path);
      throw err;
    }
  },
});

export const deleteAvatar = defineEndpoint({
  method: 'DELETE',
  path: '/users/me/avatar',
  summary: 'Delete avatar',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    return { avatar_url: await changeAvatar(call, null) };
  },
});

/** realm update_dict of the icon, or of the day or night logo, to every active user. */
async function realmImageNotice(db: Kysely<ChatTables>, realmId: number, kind: 'icon' | 'logo' | 'night_logo'): Promise<Notice[]> {
  const realm = await db.selectFrom('realms').selectAll().where('id', '=', realmId).executeTakeFirstOrThrow();
  const data =
    kind === 'icon'
      ? { icon_url: realmIconUrl(realm), icon_source: realm.icon_source }
      : { logo_url: realmLogoUrl(realm, kind === 'night_logo'), logo_source: kind === 'night_logo' ? realm.night_logo_source : realm.logo_source };
  const event = { type: 'realm', op: 'update_dict', property: kind, data };
  const userIds = (await activeUsers(db, realmId)).map((v) => v.id);
  return [{ type: 'realm', userIds, render: () => event }];
}

/** Zulip's do_change_icon_source / do_change_logo_source: the source, the version one up, the event. */
async function changeRealmImage(call: ChatCall, kind: 'icon' | 'logo' | 'night_logo', uploaded: boolean): Promise<void> {
  const { db, events } = call.services;
  await events.write(
    () =>
      db.transaction(async (trx) => {
        const q = trx.updateTable('realms').where('id', '=', call.realm.id);
        if (kind === 'icon') await q.set((eb) => ({ icon_source: uploaded ? 'U' : 'G', icon_version: eb('icon_version', '+', 1) })).execute();
        else if (kind === 'logo') await q.set((eb) => ({ logo_source: uploaded ? 'U' : 'D', logo_version: eb('logo_version', '+', 1) })).execute();
        else await q.set((eb) => ({ night_logo_source: uploaded ? 'U' : 'D', night_logo_version: eb('night_logo_version', '+', 1) })).execute();
      }),
    () => realmImageNotice(db.kysely, call.realm.id, kind),
  );
}

function requireAdmin(call: ChatCall): void {
  if (!isAdmin(requireUser(call).role)) throw adminRequired();
}

export const uploadRealmIcon = defineEndpoint({
  method: 'POST',
  path: '/realm/icon',
  summary: 'Upload realm icon',
  auth: 'user',
  streamsBody: true,
  params: Type.Object({}),
  async handler(call) {
    requireAdmin(call);
    const image = await oneImage(call, exactlyOneIcon);
    await storeRealmImage(call.services.files, call.realm.id, 'icon', image.data, image.contentType);
    await changeRealmImage(call, 'icon', true);
    const realm = await call.services.db.kysely.selectFrom('realms').selectAll().where('id', '=', call.realm.id).executeTakeFirstOrThrow();
    return { icon_url: realmIconUrl(realm) };
  },
});

export const deleteRealmIcon = defineEndpoint({
  method: 'DELETE',
  path: '/realm/icon',
  summary: 'Delete realm icon',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    requireAdmin(call);
    // The files stay, as in Zulip: a cached URL may still name them, and the next upload replaces them.
    await changeRealmImage(call, 'icon', false);
    const realm = await call.services.db.kysely.selectFrom('realms').selectAll().where('id', '=', call.realm.id).executeTakeFirstOrThrow();
    return { icon_url: realmIconUrl(realm) };
  },
});

/** `night` as Zulip reads it (a required JSON boolean), from the query or, for an upload, the form. */
function nightOf(query: boolean | undefined, form?: Map<string, string>): boolean {
  if (query !== undefined) return query;
  const raw = form?.get('night');
  if (raw === undefined) throw missingArgument({ var_name: 'night' });
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw paramNotBoolean({ name: 'night', var_name: 'night' });
}

const NIGHT = Type.Optional(Type.Boolean({ description: 'The night logo (true) or the day logo (false); required.' }));

export const uploadRealmLogo = defineEndpoint({
  method: 'POST',
  path: '/realm/logo',
  summary: 'Upload realm logo',
  auth: 'user',
  streamsBody: true,
  params: Type.Object({ night: NIGHT }),
  async handler(call, p) {
    requireAdmin(call);
    const image = await oneImage(call, exactlyOneLogo);
    const night = nightOf(p.night, image.fields);
    const kind = night ? 'night_logo' : 'logo';
    await storeRealmImage(call.services.files, call.realm.id, kind, image.data, image.contentType);
    await changeRealmImage(call, kind, true);
    return {};
  },
});

export const deleteRealmLogo = defineEndpoint({
  method: 'DELETE',
  path: '/realm/logo',
  summary: 'Delete realm logo',
  auth: 'user',
  params: Type.Object({ night: NIGHT }),
  async handler(call, p) {
    requireAdmin(call);
    await changeRealmImage(call, nightOf(p.night) ? 'night_logo' : 'logo', false);
    return {};
  },
});

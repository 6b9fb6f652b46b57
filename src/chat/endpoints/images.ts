// Uploaded images: custom emoji (POST /realm/emoji/{emoji_name}), as Zulip's upload_emoji and
// check_add_realm_emoji. The multipart body is read by the handler (streamsBody, chat/image-form.ts);
// the images are made and stored before the row is written (domain/images.ts), so a refused image
// changes nothing, and the realm_emoji event follows the commit.
import Type from 'typebox';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { builtInEmojiOverride, customEmojiExists, emojiNameCharacters, emojiNameEnd, emojiNameMissing, exactlyOneFile, insufficientPermission, limitReached, uploadedFileTooLarge } from '../errors.js';
import { readImageOf } from '../image-form.js';
import { avatarsKey, MAX_IMAGE_FILE_MIB, storeEmojiImage } from '../domain/images.js';
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

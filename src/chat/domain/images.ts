// Uploaded images as Zulip makes them (zerver/lib/thumbnail.py, zerver/lib/upload/): custom emoji
// cut to 64x64 (an animated one keeps its frames, padded square, with a still first frame as PNG
// beside it), avatars cut to 100x100 and a 500x500 "medium", realm icons as avatars, logos shrunk to
// fit 800x100. The original is kept beside each. Images are decoded by sharp (libvips, as Zulip's
// pyvips) only for the types Zulip accepts, and an image whose pixels (all frames) pass Zulip's bomb
// limit is refused before it is decoded. They live in the file store under `avatars/` and are served
// at /user_avatars/<the rest> (chat/http.ts), as Zulip's nginx serves its avatars directory.
import { createHash, randomBytes } from 'node:crypto';
import sharp, { type Metadata } from 'sharp';
import type { FileStore } from '../../platform/files/file-store.js';
import type { Realm } from '../tables.js';
import { badImage, emojiImageTooLarge, imageTooLarge, invalidImageFormat } from '../errors.js';

export const DEFAULT_AVATAR_SIZE = 100;
export const MEDIUM_AVATAR_SIZE = 500;
export const DEFAULT_EMOJI_SIZE = 64;
/** Zulip's IMAGE_BOMB_TOTAL_PIXELS: about a quarter of a gigabyte at 3 bytes a pixel. */
const IMAGE_BOMB_TOTAL_PIXELS = 90_000_000;
/** Zulip's MAX_EMOJI_GIF_FILE_SIZE_BYTES: a resized emoji (or its still) over this is refused. */
const MAX_EMOJI_BYTES = 128 * 1024;
/** Zulip's MAX_EMOJI_FILE_SIZE_MIB, MAX_AVATAR_FILE_SIZE_MIB, MAX_ICON_FILE_SIZE_MIB and MAX_LOGO_FILE_SIZE_MIB. */
export const MAX_IMAGE_FILE_MIB = 5;

/** Zulip's THUMBNAIL_ACCEPT_IMAGE_TYPES: what it decodes at all. */
const ACCEPTED = new Set(['image/avif', 'image/gif', 'image/heic', 'image/jpeg', 'image/png', 'image/tiff', 'image/webp', 'image/svg+xml']);
/** Of those, what browsers show inline (Zulip's INLINE_MIME_TYPES): emoji are served as uploaded, so must be one. */
const INLINE = new Set(['image/avif', 'image/gif', 'image/jpeg', 'image/png', 'image/webp']);
/** The extension Python's mimetypes.guess_extension gives each inline type (the emoji file's name). */
const EXTENSION: Record<string, string> = { 'image/avif': '.avif', 'image/gif': '.gif', 'image/jpeg': '.jpg', 'image/png': '.png', 'image/webp': '.webp' };
/** What /user_avatars/ answers each stored file as, by its extension (originals keep theirs). */
export const SERVED_TYPES: Record<string, string> = {
  avif: 'image/avif',
  gif: 'image/gif',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
};

/** The key in the file store of what /user_avatars/<path> serves. */
export const avatarsKey = (path: string) => `avatars/${path}`;

/** A Content-Type header's type alone, lower-cased (Zulip's bare_content_type). */
export function bareContentType(type: string | undefined): string {
  return (type ?? '').split(';')[0].trim().toLowerCase();
}

/** Decodes the header: refuses what is no image or passes the pixel limit; the number of frames. */
async function checkImage(data: Buffer): Promise<{ pages: number }> {
  let meta: Metadata;
  try {
    meta = await sharp(data, { animated: true, limitInputPixels: false }).metadata();
  } catch {
    throw badImage();
  }
  const pages = meta.pages ?? 1;
  const frameHeight = meta.pageHeight ?? meta.height ?? 0;
  if ((meta.width ?? 0) * frameHeight * pages > IMAGE_BOMB_TOTAL_PIXELS) throw imageTooLarge();
  return { pages };
}

/** Runs sharp; a decoder's failure after the header read is the client's broken image. */
async function render(make: () => Promise<Buffer>): Promise<Buffer> {
  try {
    return await make();
  } catch {
    throw badImage();
  }
}

/** Zulip's resize_avatar: scaled and centre-cropped to size x size (up or down), as PNG. */
export async function resizeAvatar(data: Buffer, size = DEFAULT_AVATAR_SIZE): Promise<Buffer> {
  await checkImage(data);
  return render(() => sharp(data, { limitInputPixels: false }).resize(size, size, { fit: 'cover', position: 'centre' }).png().toBuffer());
}

/** Zulip's resize_logo: shrunk (never enlarged) to fit 800x100, its aspect kept, as PNG. */
export async function resizeLogo(data: Buffer): Promise<Buffer> {
  await checkImage(data);
  return render(() =>
    sharp(data, { limitInputPixels: false })
      .resize(8 * DEFAULT_AVATAR_SIZE, DEFAULT_AVATAR_SIZE, { fit: 'inside', withoutEnlargement: true })
      .png()
      .toBuffer(),
  );
}

/** Refuses a type Zulip does not decode ("Invalid image format"). */
export function checkImageType(contentType: string | undefined): string {
  const type = bareContentType(contentType);
  if (!ACCEPTED.has(type)) throw invalidImageFormat();
  return type;
}

export interface StoredEmoji {
  fileName: string;
  isAnimated: boolean;
}

/**
 * Zulip's upload_emoji_image: the original kept as `<name>.original`, the emoji cut to 64x64 in the
 * uploaded format, and for an animated one a still first frame as PNG under `still/`. The file name
 * is 8 random hex characters (Zulip's is a salted hash of the emoji id: unguessable either way) and
 * the type's extension.
 */
export async function storeEmojiImage(files: FileStore, realmId: number, data: Buffer, contentType: string | undefined): Promise<StoredEmoji> {
  const type = bareContentType(contentType);
  if (!ACCEPTED.has(type) || !INLINE.has(type)) throw invalidImageFormat();
  const { pages } = await checkImage(data);
  const ext = EXTENSION[type];
  const format = ext.slice(1) === 'jpg' ? 'jpeg' : (ext.slice(1) as 'png' | 'gif' | 'webp' | 'avif');
  const fileName = `${randomBytes(4).toString('hex')}${ext}`;
  const dir = `${realmId}/emoji/images`;
  const size = DEFAULT_EMOJI_SIZE;
  let resized: Buffer;
  let still: Buffer | undefined;
  if (pages === 1) {
    resized = await render(() => sharp(data, { limitInputPixels: false }).resize(size, size, { fit: 'cover', position: 'centre' }).toFormat(format).toBuffer());
  } else {
    // The still is the first frame, cropped; the animation keeps every frame, each padded square.
    still = await render(() => sharp(data, { limitInputPixels: false }).resize(size, size, { fit: 'cover', position: 'centre' }).png().toBuffer());
    resized = await render(() =>
      sharp(data, { animated: true, limitInputPixels: false })
        .resize(size, size, { fit: 'contain', background: { r: 0, g: 0, b: 0, alpha: 0 } })
        .toFormat(format)
        .toBuffer(),
    );
  }
  if ((still ?? resized).length > MAX_EMOJI_BYTES) throw emojiImageTooLarge();
  await files.put(avatarsKey(`${dir}/${fileName}.original`), data);
  await files.put(avatarsKey(`${dir}/${fileName}`), resized);
  if (still) await files.put(avatarsKey(`${dir}/still/${fileName.replace(/\.[^.]*$/, '')}.png`), still);
  return { fileName, isAnimated: still !== undefined };
}

/** The realm's icon: the uploaded one, else Zulip's default (a Gravatar identicon of its subdomain). */
export function realmIconUrl(realm: Pick<Realm, 'id' | 'string_id' | 'icon_source' | 'icon_version'>): string {
  if (realm.icon_source === 'U') return `/user_avatars/${realm.id}/realm/icon.png?version=${realm.icon_version}`;
  return `https://secure.gravatar.com/avatar/${createHash('md5').update(realm.string_id).digest('hex')}?d=identicon&s=100`;
}

/** The realm's day or night logo: the uploaded one, else Zulip's default logo. */
export function realmLogoUrl(realm: Pick<Realm, 'id' | 'logo_source' | 'logo_version' | 'night_logo_source' | 'night_logo_version'>, night: boolean): string {
  const source = night ? realm.night_logo_source : realm.logo_source;
  if (source !== 'U') return '/static/images/logo/zulip-org-logo.svg?version=0';
  return `/user_avatars/${realm.id}/realm/${night ? 'night_logo' : 'logo'}.png?version=${night ? realm.night_logo_version : realm.logo_version}`;
}

/** Zulip's upload_avatar_image: the original, the 100x100 PNG and the 500x500 "medium", under a new random path. */
export async function storeAvatarImages(files: FileStore, realmId: number, data: Buffer, contentType: string | undefined): Promise<string> {
  checkImageType(contentType);
  const small = await resizeAvatar(data);
  const medium = await resizeAvatar(data, MEDIUM_AVATAR_SIZE);
  const path = `${realmId}/${randomBytes(20).toString('hex')}`;
  await files.put(avatarsKey(`${path}.original`), data);
  await files.put(avatarsKey(`${path}.png`), small);
  await files.put(avatarsKey(`${path}-medium.png`), medium);
  return path;
}

/** Removes an uploaded avatar's files (a replaced or deleted one). */
export async function deleteAvatarImages(files: FileStore, path: string): Promise<void> {
  await Promise.all(['.original', '.png', '-medium.png'].map((suffix) => files.delete(avatarsKey(`${path}${suffix}`)).catch(() => {})));
}

/** The realm icon (as an avatar, 100x100) or a logo (within 800x100), with its original, at Zulip's paths. */
export async function storeRealmImage(files: FileStore, realmId: number, kind: 'icon' | 'logo' | 'night_logo', data: Buffer, contentType: string | undefined): Promise<void> {
  checkImageType(contentType);
  const resized = kind === 'icon' ? await resizeAvatar(data) : await resizeLogo(data);
  await files.put(avatarsKey(`${realmId}/realm/${kind}.original`), data);
  await files.put(avatarsKey(`${realmId}/realm/${kind}.png`), resized);
}

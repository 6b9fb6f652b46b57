// Thumbnails of uploaded images, as Zulip 10 serves them at /user_uploads/thumbnail/<path_id>/<format>
// (zerver/lib/thumbnail.py): WebP within 840x560, still and animated. Keel makes a format the first
// time it is asked for (with sharp), keeps it in the file store under `thumbnail/<path_id>/<format>`,
// and serves the kept one after that; Zulip makes them in a worker right after the upload.
import sharp from 'sharp';
import type { FileStore } from '../../platform/files/file-store.js';

/** Zulip's THUMBNAIL_OUTPUT_FORMATS: a format's name is `<width>x<height>[-anim].<extension>`. */
export const THUMBNAIL_FORMATS = ['840x560-anim.webp', '840x560.webp'] as const;

/** The image types Zulip thumbnails (THUMBNAIL_ACCEPT_IMAGE_TYPES). */
export const THUMBNAIL_ACCEPT_IMAGE_TYPES = new Set(['image/avif', 'image/gif', 'image/heic', 'image/jpeg', 'image/png', 'image/tiff', 'image/webp']);

/** An image larger than this many pixels is not decoded (a small file can claim an enormous canvas). */
const MAX_INPUT_PIXELS = 100_000_000;

export interface ThumbnailFormat {
  width: number;
  height: number;
  animated: boolean;
  extension: string;
}

/** Zulip's BaseThumbnailFormat.from_string: undefined when the name is not a format at all. */
export function parseThumbnailFormat(name: string): ThumbnailFormat | undefined {
  const m = /^(\d{1,5})x(\d{1,5})(-anim)?\.(\w+)$/.exec(name);
  if (!m) return undefined;
  return { width: Number(m[1]), height: Number(m[2]), animated: m[3] !== undefined, extension: m[4] };
}

/**
 * The format Keel serves for one asked for: the same when Keel makes it; for any other, the closest
 * one (animated or not as asked, then the nearest width), as Zulip's closest_thumbnail_format picks
 * among those it rendered. A still image has only the still format.
 */
export function servedFormat(asked: ThumbnailFormat, animatedSource: boolean): (typeof THUMBNAIL_FORMATS)[number] {
  return asked.animated && animatedSource ? '840x560-anim.webp' : '840x560.webp';
}

export interface Thumbnail {
  key: string;
  format: string;
}

/**
 * The thumbnail of an upload in the format asked for, made and kept if it is not yet; undefined when
 * the upload is no image Keel thumbnails (its type, or bytes the decoder refuses).
 */
export async function ensureThumbnail(files: FileStore, pathId: string, contentType: string | null, asked: ThumbnailFormat): Promise<Thumbnail | undefined> {
  if (!contentType || !THUMBNAIL_ACCEPT_IMAGE_TYPES.has(contentType)) return undefined;
  const source = files.localPath(pathId);
  if (!source) return undefined;
  let pages = 1;
  try {
    const meta = await sharp(source, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
    pages = meta.pages ?? 1;
  } catch {
    return undefined;
  }
  const format = servedFormat(asked, pages > 1);
  const key = `thumbnail/${pathId}/${format}`;
  if (await files.stat(key)) return { key, format };
  try {
    const animated = format.includes('-anim');
    const image = sharp(source, { animated, limitInputPixels: MAX_INPUT_PIXELS });
    // A still photo is turned upright by its EXIF orientation, as libvips' thumbnail does.
    const body = await (animated ? image : image.rotate()).resize(840, 560, { fit: 'inside', withoutEnlargement: true }).webp({ quality: 80 }).toBuffer();
    await files.put(key, body);
  } catch {
    return undefined;
  }
  return { key, format };
}

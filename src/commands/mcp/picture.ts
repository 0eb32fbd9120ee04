// An image as an assistant is shown it, by generate_image and by the history
// images read as resources: scaled down with sharp to at most
// SHOWN_IMAGE_MAX_PIXELS a side, a plain JPEG without metadata. The file on
// disk, or the image in the history, keeps every pixel.

/** The longest side of the picture an assistant is shown. */
export const SHOWN_IMAGE_MAX_PIXELS = 1024;
/** The JPEG quality of that picture: enough to see it, small enough for a conversation. */
const SHOWN_IMAGE_QUALITY = 80;

export interface ShownPicture {
  data: Buffer;
  width: number;
  height: number;
  sourceWidth: number;
  sourceHeight: number;
  scaled: boolean;
}

/** A JPEG (its file, or its bytes) scaled for an assistant. */
export async function pictureForAssistant(source: string | Buffer): Promise<ShownPicture> {
  const { default: sharp } = await import('sharp');
  const image = sharp(source, { failOn: 'error' });
  const { width: sourceWidth = 0, height: sourceHeight = 0 } = await image.metadata();
  const { data, info } = await image
    .resize({ width: SHOWN_IMAGE_MAX_PIXELS, height: SHOWN_IMAGE_MAX_PIXELS, fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality: SHOWN_IMAGE_QUALITY })
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, sourceWidth, sourceHeight, scaled: info.width < sourceWidth };
}

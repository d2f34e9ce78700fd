import { CDN_IMAGE_SIZES, DEFAULT_AVATAR_COLORS, DEFAULT_AVATAR_SIZE, FormErrors } from '@hearth/protocol';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import { solidPng } from './images.js';
import type { AccountsService, StoredImage } from './service.js';

/** `{hash}.{ext}`: an image hash (`a_` for animated) and a format the platform's CDN names. */
const IMAGE_FILE = /^((?:a_)?[0-9a-f]{32})\.(png|jpg|jpeg|webp|gif)$/;
const DEFAULT_AVATAR_FILE = /^(\d+)\.png$/;
/** Content-addressed: a hash always names the same bytes. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The CDN-style routes, at the server's root as the platform's CDN serves them: `/avatars/{user}/{hash}.png`,
 * `/banners/…`, `/embed/avatars/{index}.png`. Stored images are served as uploaded (their own type, whatever
 * the extension asks) for every valid `size`; default avatars are drawn at the size asked.
 */
export function cdnRoutes(accounts: AccountsService): FastifyPluginAsync {
  return async (app) => {
    const defaults = new Map<string, Buffer>();

    for (const kind of ['avatar', 'banner'] as const) {
      app.get<{ Params: { user_id: string; file: string }; Querystring: Record<string, string> }>(
        `/${kind}s/:user_id/:file`,
        async (request, reply) => {
          imageSize(request.query['size']);
          const hash = IMAGE_FILE.exec(request.params.file)?.[1];
          const image = hash && (await accounts.userImage(request.params.user_id, kind, hash));
          if (!image) throw new HearthError('GeneralNotFound');
          return sendImage(reply, image);
        },
      );
    }

    app.get<{ Params: { file: string }; Querystring: Record<string, string> }>(
      '/embed/avatars/:file',
      async (request, reply) => {
        const size = imageSize(request.query['size']) ?? DEFAULT_AVATAR_SIZE;
        const index = Number(DEFAULT_AVATAR_FILE.exec(request.params.file)?.[1] ?? Number.NaN);
        const color = DEFAULT_AVATAR_COLORS[index];
        if (color === undefined) throw new HearthError('GeneralNotFound');
        const key = `${index}:${size}`;
        let bytes = defaults.get(key);
        if (!bytes) {
          bytes = solidPng(size, color);
          defaults.set(key, bytes);
        }
        return sendImage(reply, { contentType: 'image/png', bytes });
      },
    );
  };
}

/** The `size` asked for, if any; anything but a power of two from 16 to 4096 is a 400. */
function imageSize(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const size = Number(raw);
  if (!/^\d+$/.test(raw) || !(CDN_IMAGE_SIZES as readonly number[]).includes(size)) {
    throw invalidForm('size', FormErrors.choices(CDN_IMAGE_SIZES));
  }
  return size;
}

function sendImage(reply: FastifyReply, image: StoredImage): FastifyReply {
  return reply.header('content-type', image.contentType).header('cache-control', IMMUTABLE).send(image.bytes);
}

import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { HearthError } from '../../kernel/errors.js';
import type { StoredImage } from '../accounts/service.js';
import type { ApplicationEmojisService } from './emojis.js';
import type { ApplicationsService } from './service.js';

const IMAGE_FILE = /^((?:a_)?[0-9a-f]{32})\.(png|jpg|jpeg|webp|gif)$/;
const EMOJI_FILE = /^(\d{1,20})\.(png|jpg|jpeg|webp|gif|avif)$/;
/** An application's icon hash names the same bytes for ever; an emoji's id does too (it cannot be re-uploaded). */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The CDN-style routes of application images (DOCS reference: Image Formatting): `/app-icons/{id}/{icon}.png`
 * (icon and cover image) and `/emojis/{emoji_id}.png`. Stored images are served as uploaded.
 */
export function applicationCdnRoutes(
  applications: ApplicationsService,
  emojis: ApplicationEmojisService,
): FastifyPluginAsync {
  return async (app) => {
    app.get<{ Params: { application_id: string; file: string } }>(
      '/app-icons/:application_id/:file',
      async (request, reply) => {
        const hash = IMAGE_FILE.exec(request.params.file)?.[1];
        const id = request.params.application_id;
        const image = hash && /^\d{1,20}$/.test(id) && (await applications.applicationImage(id, hash));
        if (!image) throw new HearthError('GeneralNotFound');
        return send(reply, image);
      },
    );
    app.get<{ Params: { file: string } }>('/emojis/:file', async (request, reply) => {
      const id = EMOJI_FILE.exec(request.params.file)?.[1];
      const image = id && (await emojis.image(id));
      if (!image) throw new HearthError('GeneralNotFound');
      return send(reply, image);
    });
  };
}

function send(reply: FastifyReply, image: StoredImage): FastifyReply {
  return reply.header('content-type', image.contentType).header('cache-control', IMMUTABLE).send(image.bytes);
}

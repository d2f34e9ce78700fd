import type { FastifyPluginAsync } from 'fastify';
import { HearthError } from '../../kernel/errors.js';
import type { DmChannels } from './dm-channels.js';

const IMAGE_FILE = /^((?:a_)?[0-9a-f]{32})\.(png|jpg|jpeg|webp|gif)$/;
/** Content-addressed: a hash always names the same bytes. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * A group DM's icon at the CDN-style path the platform gives it (DOCS reference: Image Formatting,
 * `channel-icons/{channel_id}/{channel.icon}.png`), served as uploaded, as avatars are.
 */
export function channelIconRoutes(dms: DmChannels): FastifyPluginAsync {
  return async (app) => {
    app.get<{ Params: { channel_id: string; file: string } }>(
      '/channel-icons/:channel_id/:file',
      async (request, reply) => {
        const hash = IMAGE_FILE.exec(request.params.file)?.[1];
        const id = request.params.channel_id;
        const image = hash && /^\d{1,20}$/.test(id) && (await dms.icon(id, hash));
        if (!image) throw new HearthError('GeneralNotFound');
        return reply
          .header('content-type', image.contentType)
          .header('cache-control', IMMUTABLE)
          .send(image.bytes);
      },
    );
  };
}

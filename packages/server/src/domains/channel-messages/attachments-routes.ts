import type { FastifyPluginAsync } from 'fastify';
import type { Storage } from '../../storage/database.js';
import type { Attachments } from './attachments.js';
import { AttachmentParams } from './attachments-schemas.js';

/** An attachment's id names its bytes for good. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Shown in place: raster images Hearth read the size of. Anything else is a download. */
const INLINE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * `GET /attachments/{channel_id}/{attachment_id}/{filename}`: the attachment `url`, at the server's root as
 * the platform's CDN serves it. The stored type is sent with `nosniff`, and everything but an image as a
 * download, so an uploaded page or script never runs on this origin.
 */
export function attachmentsCdnRoutes(attachments: Attachments, storage: Storage): FastifyPluginAsync {
  return async (app) => {
    app.get<{ Params: AttachmentParams }>(
      '/attachments/:channel_id/:attachment_id/:filename',
      { schema: { params: AttachmentParams } },
      async (request, reply) => {
        const { channel_id, attachment_id, filename } = request.params;
        const file = await attachments.open(storage.db, channel_id, attachment_id, filename);
        const type = file.row.content_type ?? 'application/octet-stream';
        const inline = INLINE_TYPES.has(type) && file.row.width !== null;
        return reply
          .header('content-type', type)
          .header('content-length', file.size)
          .header('content-disposition', contentDisposition(inline, file.row.filename))
          .header('x-content-type-options', 'nosniff')
          .header('cache-control', IMMUTABLE)
          .send(file.stream);
      },
    );
  };
}

/** RFC 6266: an ASCII fallback name and the exact one in RFC 5987 form. */
function contentDisposition(inline: boolean, filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

import {
  ATTACHMENT_URL_PREFIX,
  EMBED_URL_SCHEMES,
  EmbedLimits,
  FormErrors,
  MEDIA_URL_SCHEMES,
  MessageLimits,
} from '@hearth/protocol';
import { type Static, type TSchema, Type } from 'typebox';
import { characters, type FieldPath, FormBody, schemeOf } from './form-body.js';

/**
 * Rich embeds of a message (GUILDS.md §4.5, §4.7; OAS `RichEmbed`; seed Limits "embeds"): the request
 * shape, the limits no schema can say (6000 characters across the message, required texts), and the
 * stored object. A sender cannot set `type` (always `rich`), `provider`, `video` or an image's size: they
 * are read and dropped, as the platform does.
 */

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Optional = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));
const Text = (maxLength: number) => Type.String({ maxLength });
const Url = Type.String({ maxLength: EmbedLimits.url, format: 'uri' });
/** A date, or a date and time with an optional offset: what ISO 8601 allows and `Date` reads alike. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

const EmbedMedia = Type.Object({
  url: Url,
  width: Optional(Type.Integer()),
  height: Optional(Type.Integer()),
});

const EmbedField = Type.Object({
  name: Text(EmbedLimits.fieldName),
  value: Text(EmbedLimits.fieldValue),
  inline: Optional(Type.Boolean()),
});

export const EmbedRequest = Type.Object({
  type: Optional(Type.String()),
  title: Optional(Text(EmbedLimits.title)),
  description: Optional(Text(EmbedLimits.description)),
  url: Optional(Url),
  timestamp: Optional(Type.String()),
  color: Optional(Type.Integer({ minimum: 0, maximum: 0xffffff })),
  footer: Optional(Type.Object({ text: Text(EmbedLimits.footerText), icon_url: Optional(Url) })),
  image: Optional(EmbedMedia),
  thumbnail: Optional(EmbedMedia),
  video: Optional(EmbedMedia),
  provider: Optional(Type.Object({ name: Optional(Text(EmbedLimits.authorName)), url: Optional(Url) })),
  author: Optional(
    Type.Object({ name: Text(EmbedLimits.authorName), url: Optional(Url), icon_url: Optional(Url) }),
  ),
  fields: Optional(Type.Array(EmbedField, { maxItems: EmbedLimits.fields })),
});
export type EmbedRequest = Static<typeof EmbedRequest>;

/** `embeds` of a create or edit body. */
export const EmbedsRequest = Nullable(Type.Array(EmbedRequest, { maxItems: MessageLimits.embedsMax }));

/** A stored embed, as the message object carries it (OAS `MessageEmbedResponse`). */
export type Embed = {
  type: string;
  title?: string;
  description?: string;
  url?: string;
  timestamp?: string;
  color?: number;
  footer?: { text: string; icon_url?: string };
  image?: { url: string };
  thumbnail?: { url: string };
  author?: { name: string; url?: string; icon_url?: string };
  fields?: { name: string; value: string; inline: boolean }[];
};

/** An upload of the same message an embed image may name as `attachment://<filename>`. */
export interface EmbedAttachment {
  readonly filename: string;
  readonly url: string;
}

/**
 * Validates `embeds` of a create or edit body and returns the embeds to store. Every bad field answers
 * under its path (`embeds.0.fields` for 26 fields); the total size answers under `embeds`.
 */
export function parseEmbeds(value: unknown, attachments: readonly EmbedAttachment[] = []): Embed[] {
  if (value === undefined || value === null) return [];
  const form = new FormBody();
  if (!form.check(EmbedsRequest, value, ['embeds'])) form.throwIfAny();
  const embeds = value as EmbedRequest[];
  embeds.forEach((embed, index) => {
    checkEmbed(form, embed, ['embeds', index]);
  });
  form.throwIfAny();
  if (embedsSize(embeds) > EmbedLimits.total) {
    form.add(['embeds'], FormErrors.embedSizeExceeded(EmbedLimits.total));
    form.throwIfAny();
  }
  return embeds.map((embed) => normalizeEmbed(embed, attachments));
}

/** What the schema cannot say: required texts that are empty, URL schemes, the timestamp. */
function checkEmbed(form: FormBody, embed: EmbedRequest, path: FieldPath): void {
  if (embed.url) checkScheme(form, embed.url, EMBED_URL_SCHEMES, [...path, 'url']);
  if (embed.author?.url) checkScheme(form, embed.author.url, EMBED_URL_SCHEMES, [...path, 'author', 'url']);
  for (const key of ['image', 'thumbnail'] as const) {
    const media = embed[key];
    if (media) checkScheme(form, media.url, MEDIA_URL_SCHEMES, [...path, key, 'url']);
  }
  if (embed.author?.icon_url) {
    checkScheme(form, embed.author.icon_url, MEDIA_URL_SCHEMES, [...path, 'author', 'icon_url']);
  }
  if (embed.footer?.icon_url) {
    checkScheme(form, embed.footer.icon_url, MEDIA_URL_SCHEMES, [...path, 'footer', 'icon_url']);
  }
  if (embed.timestamp && !isIsoTimestamp(embed.timestamp)) {
    form.add([...path, 'timestamp'], FormErrors.dateTime(embed.timestamp));
  }
  embed.fields?.forEach((field, index) => {
    if (field.name === '') form.add([...path, 'fields', index, 'name'], FormErrors.required());
    if (field.value === '') form.add([...path, 'fields', index, 'value'], FormErrors.required());
  });
}

function isIsoTimestamp(text: string): boolean {
  return ISO_8601.test(text) && !Number.isNaN(Date.parse(text));
}

function checkScheme(form: FormBody, url: string, allowed: readonly string[], path: FieldPath): void {
  const scheme = schemeOf(url);
  if (!allowed.includes(scheme)) form.add(path, FormErrors.urlScheme(scheme, allowed));
}

/** The characters the 6000 limit counts: titles, descriptions, field names and values, footers, authors. */
export function embedsSize(embeds: readonly EmbedRequest[]): number {
  let size = 0;
  for (const embed of embeds) {
    size += characters(embed.title) + characters(embed.description);
    size += characters(embed.footer?.text) + characters(embed.author?.name);
    for (const field of embed.fields ?? []) size += characters(field.name) + characters(field.value);
  }
  return size;
}

function normalizeEmbed(embed: EmbedRequest, attachments: readonly EmbedAttachment[]): Embed {
  const media = (url: string) => ({ url: resolveAttachment(url, attachments) });
  const out: Embed = { type: 'rich' };
  if (embed.title) out.title = embed.title;
  if (embed.description) out.description = embed.description;
  if (embed.url) out.url = embed.url;
  if (embed.timestamp) out.timestamp = new Date(embed.timestamp).toISOString();
  if (embed.color !== undefined && embed.color !== null) out.color = embed.color;
  if (embed.footer) {
    out.footer = { text: embed.footer.text };
    if (embed.footer.icon_url) out.footer.icon_url = resolveAttachment(embed.footer.icon_url, attachments);
  }
  if (embed.image) out.image = media(embed.image.url);
  if (embed.thumbnail) out.thumbnail = media(embed.thumbnail.url);
  if (embed.author) {
    out.author = { name: embed.author.name };
    if (embed.author.url) out.author.url = embed.author.url;
    if (embed.author.icon_url) out.author.icon_url = resolveAttachment(embed.author.icon_url, attachments);
  }
  if (embed.fields && embed.fields.length > 0) {
    out.fields = embed.fields.map((f) => ({ name: f.name, value: f.value, inline: f.inline ?? false }));
  }
  return out;
}

/** `attachment://name` becomes the URL the upload is served at; a name the message lacks stays as sent. */
function resolveAttachment(url: string, attachments: readonly EmbedAttachment[]): string {
  if (!url.startsWith(ATTACHMENT_URL_PREFIX)) return url;
  const name = url.slice(ATTACHMENT_URL_PREFIX.length);
  return attachments.find((a) => a.filename === name)?.url ?? url;
}

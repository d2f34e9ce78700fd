import { EmbedLimits, MessageLimits } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGuild, seedTestChannel, type TestGuild } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';

/**
 * Message embeds (GUILDS.md §4.5, §4.7; seed Limits "embeds", Errors "An embed has more than 25 fields"):
 * every limit at its edge and one past it through Create and Edit Message, with the exact error body.
 */

type Json = Record<string, unknown>;

let hearth: TestHearth;
let guild: TestGuild;
let channelId: string;

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  guild = await createTestGuild(hearth);
  channelId = await seedTestChannel(hearth, guild.id);
});
afterAll(() => hearth.close());

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const response = await hearth.api(path, {
    method,
    auth: guild.owner.token,
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  expect(response.status).toBeLessThan(500);
  return { status: response.status, body: (text === '' ? null : JSON.parse(text)) as Json };
}

const send = (body: Json) => call('POST', `/channels/${channelId}/messages`, body);
const sendEmbeds = (embeds: unknown) => send({ embeds });

async function sent(body: Json): Promise<Json & { id: string; embeds: Json[] }> {
  const answer = await send(body);
  expect(answer.body).toMatchObject({ channel_id: channelId });
  expect(answer.status).toBe(200);
  return answer.body as Json & { id: string; embeds: Json[] };
}

const invalid = (errors: unknown) => ({ code: 50035, message: 'Invalid Form Body', errors });
/** The `errors` tree with one leaf at a dotted path. */
function at(path: string, code: string, message: string): Json {
  return path
    .split('.')
    .reverse()
    .reduce<Json>((tree, key) => ({ [key]: tree }), { _errors: [{ code, message }] });
}
const maxLength = (path: string, max: number) =>
  invalid(at(path, 'BASE_TYPE_MAX_LENGTH', `Must be ${max} or fewer in length.`));
const x = (n: number) => 'x'.repeat(n);
const fields = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `f${i}`, value: `v${i}` }));

describe('Embed object: what is stored', () => {
  it('stores the normalized embed: type rich, inline false, ISO timestamp; provider, video and image size dropped', async () => {
    const message = await sent({
      embeds: [
        {
          type: 'video',
          title: 'Match report',
          description: 'Blue wins',
          url: 'https://example.com/report',
          color: 0x00ff00,
          timestamp: '2025-03-01T12:00:00+01:00',
          footer: { text: 'footer', icon_url: 'https://example.com/f.png' },
          image: { url: 'https://example.com/i.png', width: 5, height: 5 },
          thumbnail: { url: 'https://example.com/t.png' },
          author: { name: 'Referee', url: 'https://example.com/a', icon_url: 'https://example.com/a.png' },
          fields: [
            { name: 'Score', value: '3-1', inline: true },
            { name: 'MVP', value: 'Ana' },
          ],
          provider: { name: 'Somebody', url: 'https://example.com' },
          video: { url: 'https://example.com/v.mp4' },
        },
      ],
    });
    const expected = {
      type: 'rich',
      title: 'Match report',
      description: 'Blue wins',
      url: 'https://example.com/report',
      color: 0x00ff00,
      timestamp: '2025-03-01T11:00:00.000Z',
      footer: { text: 'footer', icon_url: 'https://example.com/f.png' },
      image: { url: 'https://example.com/i.png' },
      thumbnail: { url: 'https://example.com/t.png' },
      author: { name: 'Referee', url: 'https://example.com/a', icon_url: 'https://example.com/a.png' },
      fields: [
        { name: 'Score', value: '3-1', inline: true },
        { name: 'MVP', value: 'Ana', inline: false },
      ],
    };
    expect(message.embeds).toEqual([expected]);
    const read = await call('GET', `/channels/${channelId}/messages/${message.id}`);
    expect(read.body['embeds']).toEqual([expected]);
  });

  it('a message of embeds alone needs no content', async () => {
    const message = await sent({ embeds: [{ description: 'only an embed' }] });
    expect(message).toMatchObject({ content: '', embeds: [{ type: 'rich', description: 'only an embed' }] });
  });
});

describe('Embed limits (GUILDS.md §4.7): edge accepted, edge + 1 refused with 50035 at the field', () => {
  it(`${MessageLimits.embedsMax} embeds per message; one more is refused at embeds`, async () => {
    const ten = Array.from({ length: MessageLimits.embedsMax }, (_, i) => ({ title: `e${i}` }));
    expect((await sent({ embeds: ten })).embeds).toHaveLength(MessageLimits.embedsMax);
    const eleven = await sendEmbeds([...ten, { title: 'one more' }]);
    expect(eleven).toEqual({ status: 400, body: maxLength('embeds', MessageLimits.embedsMax) });
  });

  it(`${EmbedLimits.fields} fields; 26 is a validation error naming embeds.0.fields (seed)`, async () => {
    await sent({ embeds: [{ fields: fields(EmbedLimits.fields) }] });
    const answer = await sendEmbeds([{ fields: fields(EmbedLimits.fields + 1) }]);
    expect(answer).toEqual({ status: 400, body: maxLength('embeds.0.fields', EmbedLimits.fields) });
  });

  const lengths: [string, number, (text: string) => Json][] = [
    ['title', EmbedLimits.title, (t) => ({ title: t })],
    ['description', EmbedLimits.description, (t) => ({ description: t })],
    ['fields.0.name', EmbedLimits.fieldName, (t) => ({ fields: [{ name: t, value: 'v' }] })],
    ['fields.0.value', EmbedLimits.fieldValue, (t) => ({ fields: [{ name: 'n', value: t }] })],
    ['footer.text', EmbedLimits.footerText, (t) => ({ footer: { text: t } })],
    ['author.name', EmbedLimits.authorName, (t) => ({ author: { name: t } })],
  ];
  it.each(lengths)('%s: %i characters accepted, one more refused', async (path, max, embed) => {
    await sent({ embeds: [embed(x(max))] });
    const answer = await sendEmbeds([{ title: 'ok' }, embed(x(max + 1))]);
    expect(answer).toEqual({ status: 400, body: maxLength(`embeds.1.${path}`, max) });
  });

  it('lengths count characters, not UTF-16 units: 256 emoji make a valid title', async () => {
    await sent({ embeds: [{ title: '🎮'.repeat(EmbedLimits.title) }] });
  });

  it(`${EmbedLimits.total} characters across all embeds; one more is MAX_EMBED_SIZE_EXCEEDED at embeds`, async () => {
    const fieldValue = EmbedLimits.total - EmbedLimits.title - EmbedLimits.description - 1300;
    const embeds = (footer: number) => [
      { title: x(EmbedLimits.title), description: x(EmbedLimits.description) },
      {
        author: { name: x(200) },
        footer: { text: x(footer) },
        fields: [{ name: x(100), value: x(fieldValue) }],
      },
    ];
    await sent({ embeds: embeds(1000) });
    expect(await sendEmbeds(embeds(1001))).toEqual({
      status: 400,
      body: invalid(at('embeds', 'MAX_EMBED_SIZE_EXCEEDED', 'Embed size exceeds maximum size of 6000')),
    });
  });

  it('color 0xFFFFFF is the largest', async () => {
    await sent({ embeds: [{ color: 0xffffff }] });
    expect(await sendEmbeds([{ color: 0x1000000 }])).toEqual({
      status: 400,
      body: invalid(
        at('embeds.0.color', 'NUMBER_TYPE_MAX', 'int value should be less than or equal to 16777215.'),
      ),
    });
  });
});

describe('Embed shapes: bad input answers 50035 under its path, never 500', () => {
  it('a field without a name, or with an empty value, is required', async () => {
    expect(await sendEmbeds([{ fields: [{ value: 'v' }] }])).toEqual({
      status: 400,
      body: invalid(at('embeds.0.fields.0.name', 'BASE_TYPE_REQUIRED', 'This field is required')),
    });
    expect(await sendEmbeds([{ fields: [{ name: 'n', value: '' }] }])).toEqual({
      status: 400,
      body: invalid(at('embeds.0.fields.0.value', 'BASE_TYPE_REQUIRED', 'This field is required')),
    });
  });

  it('wrong types: embeds not a list, an embed not an object, a title not a string', async () => {
    expect(await sendEmbeds('embed')).toEqual({
      status: 400,
      body: invalid(at('embeds', 'LIST_TYPE_CONVERT', 'Only iterables may be used in a ListType')),
    });
    expect(await sendEmbeds([5])).toEqual({
      status: 400,
      body: invalid(at('embeds.0', 'DICT_TYPE_CONVERT', 'Only dictionaries may be used in a DictType')),
    });
    expect(await sendEmbeds([{ title: 5 }])).toEqual({
      status: 400,
      body: invalid(at('embeds.0.title', 'BASE_TYPE_STRING', 'Could not interpret "5" as string.')),
    });
  });

  it('a timestamp that is not ISO 8601', async () => {
    expect(await sendEmbeds([{ timestamp: 'March 1, 2025' }])).toEqual({
      status: 400,
      body: invalid(
        at('embeds.0.timestamp', 'DATE_TIME_TYPE_PARSE', 'Could not parse March 1, 2025. Should be ISO8601.'),
      ),
    });
    expect(await sendEmbeds([{ timestamp: 'yesterday' }])).toEqual({
      status: 400,
      body: invalid(
        at('embeds.0.timestamp', 'DATE_TIME_TYPE_PARSE', 'Could not parse yesterday. Should be ISO8601.'),
      ),
    });
  });

  it('URLs: malformed, or a scheme the field does not take', async () => {
    expect(await sendEmbeds([{ url: 'not a url' }])).toEqual({
      status: 400,
      body: invalid(at('embeds.0.url', 'URL_TYPE_INVALID_URL', 'Not a well formed URL.')),
    });
    expect(await sendEmbeds([{ url: 'ftp://example.com/x' }])).toEqual({
      status: 400,
      body: invalid(
        at(
          'embeds.0.url',
          'URL_TYPE_INVALID_SCHEME',
          `Scheme "ftp" is not supported. Scheme must be one of ('http', 'https').`,
        ),
      ),
    });
  });

  it('every bad field of every embed answers at once', async () => {
    const answer = await sendEmbeds([
      { title: x(EmbedLimits.title + 1) },
      { fields: fields(EmbedLimits.fields + 1) },
    ]);
    expect(answer).toEqual({
      status: 400,
      body: invalid({
        embeds: {
          0: {
            title: {
              _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 256 or fewer in length.' }],
            },
          },
          1: {
            fields: {
              _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 25 or fewer in length.' }],
            },
          },
        },
      }),
    });
  });
});

describe('Edit Message: embeds follow the same rules', () => {
  it('replaces the embeds, refuses 26 fields with nothing changed, and clears them with []', async () => {
    const message = await sent({ content: 'report', embeds: [{ title: 'first' }] });
    const path = `/channels/${channelId}/messages/${message.id}`;
    const edited = await call('PATCH', path, { embeds: [{ title: 'second', fields: fields(2) }] });
    expect(edited.status).toBe(200);
    expect(edited.body['embeds']).toEqual([
      {
        type: 'rich',
        title: 'second',
        fields: [
          { name: 'f0', value: 'v0', inline: false },
          { name: 'f1', value: 'v1', inline: false },
        ],
      },
    ]);
    const refused = await call('PATCH', path, { embeds: [{ fields: fields(EmbedLimits.fields + 1) }] });
    expect(refused).toEqual({ status: 400, body: maxLength('embeds.0.fields', EmbedLimits.fields) });
    expect((await call('GET', path)).body['embeds']).toEqual(edited.body['embeds']);
    const cleared = await call('PATCH', path, { embeds: [] });
    expect(cleared.body['embeds']).toEqual([]);
  });

  it(`an edit past ${EmbedLimits.total} characters is refused`, async () => {
    const message = await sent({ embeds: [{ description: x(EmbedLimits.description) }] });
    const answer = await call('PATCH', `/channels/${channelId}/messages/${message.id}`, {
      embeds: [{ description: x(EmbedLimits.description) }, { description: x(2000) }],
    });
    expect(answer).toEqual({
      status: 400,
      body: invalid(at('embeds', 'MAX_EMBED_SIZE_EXCEEDED', 'Embed size exceeds maximum size of 6000')),
    });
  });
});

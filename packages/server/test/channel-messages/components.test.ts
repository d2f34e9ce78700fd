import { ComponentLimits, MessageFlags } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGuild, seedTestChannel, type TestGuild } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';

/**
 * Message components (GUILDS.md §5; seed Limits "components", Records "Select-menu components"): legacy
 * action rows and Components V2 trees through Create and Edit Message; every limit at its edge and one past
 * it, every bad tree answered with 50035 at the path of the bad component.
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

const V2 = MessageFlags.IsComponentsV2;
const send = (body: Json) => call('POST', `/channels/${channelId}/messages`, body);
const sendRows = (components: unknown) => send({ components });
const sendV2 = (components: unknown, extra: Json = {}) => send({ flags: V2, components, ...extra });

async function sent(body: Json): Promise<Json & { id: string; components: Json[] }> {
  const answer = await send(body);
  expect(answer.body).toMatchObject({ channel_id: channelId });
  expect(answer.status).toBe(200);
  return answer.body as Json & { id: string; components: Json[] };
}

const invalid = (errors: unknown) => ({ code: 50035, message: 'Invalid Form Body', errors });
function at(path: string, code: string, message: string): Json {
  return path
    .split('.')
    .reverse()
    .reduce<Json>((tree, key) => ({ [key]: tree }), { _errors: [{ code, message }] });
}
const refused = (path: string, code: string, message: string) => ({
  status: 400,
  body: invalid(at(path, code, message)),
});
const badLength = (path: string, min: number, max: number) =>
  refused(path, 'BASE_TYPE_BAD_LENGTH', `Must be between ${min} and ${max} in length.`);

let customIds = 0;
const button = (extra: Json = {}) => ({
  type: 2,
  style: 1,
  label: 'Go',
  custom_id: `b${++customIds}`,
  ...extra,
});
const row = (...components: unknown[]) => ({ type: 1, components });
const options = (n: number) => Array.from({ length: n }, (_, i) => ({ label: `o${i}`, value: `v${i}` }));
const stringSelect = (extra: Json = {}) => ({
  type: 3,
  custom_id: `s${++customIds}`,
  options: options(3),
  ...extra,
});
const text = (content = 'hello') => ({ type: 10, content });
const SNOWFLAKE = '175928847299117063';

describe('Legacy messages: action rows (GUILDS.md §5)', () => {
  it('stores the rows with sequential ids and the platform defaults', async () => {
    const message = await sent({
      content: 'pick',
      components: [
        row(
          { type: 2, style: 1, label: 'Yes', custom_id: 'yes' },
          { type: 2, style: 4, label: 'No', custom_id: 'no', emoji: { name: '🚫' }, disabled: true },
          { type: 2, style: 5, label: 'Docs', url: 'https://example.com/docs' },
          { type: 2, style: 6, sku_id: SNOWFLAKE },
        ),
        row({
          type: 3,
          custom_id: 'map',
          placeholder: 'Map',
          options: [{ label: 'Dust', value: 'dust', default: true }],
        }),
      ],
    });
    const expected = [
      {
        type: 1,
        id: 1,
        components: [
          { type: 2, id: 2, style: 1, label: 'Yes', custom_id: 'yes' },
          { type: 2, id: 3, style: 4, label: 'No', custom_id: 'no', emoji: { name: '🚫' }, disabled: true },
          { type: 2, id: 4, style: 5, label: 'Docs', url: 'https://example.com/docs' },
          { type: 2, id: 5, style: 6, sku_id: SNOWFLAKE },
        ],
      },
      {
        type: 1,
        id: 6,
        components: [
          {
            type: 3,
            id: 7,
            custom_id: 'map',
            placeholder: 'Map',
            min_values: 1,
            max_values: 1,
            options: [{ label: 'Dust', value: 'dust', default: true }],
          },
        ],
      },
    ];
    expect(message.components).toEqual(expected);
    const read = await call('GET', `/channels/${channelId}/messages/${message.id}`);
    expect(read.body['components']).toEqual(expected);
  });

  it(`${ComponentLimits.legacyActionRows} action rows; a sixth is refused at components`, async () => {
    const rows = (n: number) => Array.from({ length: n }, () => row(button()));
    await sent({ components: rows(ComponentLimits.legacyActionRows) });
    expect(await sendRows(rows(ComponentLimits.legacyActionRows + 1))).toEqual(
      refused('components', 'BASE_TYPE_MAX_LENGTH', 'Must be 5 or fewer in length.'),
    );
  });

  it('a row holds 1 to 5 buttons', async () => {
    const buttons = (n: number) => Array.from({ length: n }, () => button());
    await sent({ components: [row(...buttons(ComponentLimits.actionRowButtons))] });
    expect(await sendRows([row(...buttons(ComponentLimits.actionRowButtons + 1))])).toEqual(
      badLength('components.0.components', 1, 5),
    );
    expect(await sendRows([row()])).toEqual(badLength('components.0.components', 1, 5));
  });

  it('a select stands alone in its row', async () => {
    expect(await sendRows([row(stringSelect(), button())])).toEqual(
      refused(
        'components.0.components.1',
        'COMPONENT_LAYOUT_WIDTH_EXCEEDED',
        'The specified component exceeds the maximum width',
      ),
    );
  });

  it('only action rows stand at the top of a legacy message; only buttons and selects inside a row', async () => {
    expect(await sendRows([text()])).toEqual(
      refused('components.0', 'UNION_TYPE_CHOICES', 'Value of field "type" must be one of (1,).'),
    );
    expect(await sendRows([row(button(), text())])).toEqual(
      refused(
        'components.0.components.1',
        'UNION_TYPE_CHOICES',
        'Value of field "type" must be one of (2, 3, 5, 6, 7, 8).',
      ),
    );
    expect(await sendRows([row(button({ type: 4 }))])).toEqual(
      refused(
        'components.0.components.0',
        'UNION_TYPE_CHOICES',
        'Value of field "type" must be one of (2, 3, 5, 6, 7, 8).',
      ),
    );
  });

  it('wrong types answer under the component, never 500', async () => {
    expect(await sendRows('rows')).toEqual(
      refused('components', 'LIST_TYPE_CONVERT', 'Only iterables may be used in a ListType'),
    );
    expect(await sendRows([7])).toEqual(
      refused('components.0', 'DICT_TYPE_CONVERT', 'Only dictionaries may be used in a DictType'),
    );
    expect(await sendRows([row(button({ label: 12 }))])).toEqual(
      refused('components.0.components.0.label', 'BASE_TYPE_STRING', 'Could not interpret "12" as string.'),
    );
    expect(await sendRows([{ type: 1, components: 'buttons' }])).toEqual(
      refused('components.0.components', 'LIST_TYPE_CONVERT', 'Only iterables may be used in a ListType'),
    );
  });
});

describe('Buttons: style decides the fields', () => {
  const first = 'components.0.components.0';

  it(`label ${ComponentLimits.buttonLabel} and custom_id ${ComponentLimits.customId} characters; one more refused`, async () => {
    await sent({ components: [row(button({ label: 'l'.repeat(80), custom_id: 'c'.repeat(100) }))] });
    expect(await sendRows([row(button({ label: 'l'.repeat(81) }))])).toEqual(
      refused(`${first}.label`, 'BASE_TYPE_MAX_LENGTH', 'Must be 80 or fewer in length.'),
    );
    expect(await sendRows([row(button({ custom_id: 'c'.repeat(101) }))])).toEqual(
      badLength(`${first}.custom_id`, 1, 100),
    );
  });

  it('primary to danger need a custom_id that no other component of the message has', async () => {
    expect(await sendRows([row({ type: 2, style: 1, label: 'x' })])).toEqual(
      refused(`${first}.custom_id`, 'BUTTON_COMPONENT_CUSTOM_ID_REQUIRED', 'A custom id is required'),
    );
    expect(
      await sendRows([row(button({ custom_id: 'same' })), row(stringSelect({ custom_id: 'same' }))]),
    ).toEqual(
      refused(
        'components.1.components.0.custom_id',
        'COMPONENT_CUSTOM_ID_DUPLICATED',
        'Component custom id cannot be duplicated',
      ),
    );
  });

  it('a link button needs a url and no custom_id', async () => {
    expect(await sendRows([row({ type: 2, style: 5, label: 'x' })])).toEqual(
      refused(`${first}.url`, 'BUTTON_COMPONENT_URL_REQUIRED', 'A url is required'),
    );
    expect(
      await sendRows([row({ type: 2, style: 5, label: 'x', url: 'https://e.com', custom_id: 'c' })]),
    ).toEqual(
      refused(
        `${first}.custom_id`,
        'BUTTON_COMPONENT_CUSTOM_ID_URL_MUTUALLY_EXCLUSIVE',
        'A custom id and url cannot both be specified',
      ),
    );
    expect(await sendRows([row({ type: 2, style: 5, label: 'x', url: 'ftp://e.com' })])).toEqual(
      refused(
        `${first}.url`,
        'URL_TYPE_INVALID_SCHEME',
        `Scheme "ftp" is not supported. Scheme must be one of ('http', 'https', 'discord').`,
      ),
    );
  });

  it('a premium button needs a sku_id and takes no label', async () => {
    expect(await sendRows([row({ type: 2, style: 6 })])).toEqual(
      refused(`${first}.sku_id`, 'BUTTON_COMPONENT_SKU_ID_REQUIRED', 'A sku id is required'),
    );
    expect(await sendRows([row({ type: 2, style: 6, sku_id: SNOWFLAKE, label: 'Buy' })])).toEqual(
      refused(
        `${first}.label`,
        'BUTTON_COMPONENT_FIELD_NOT_ALLOWED',
        'This field cannot be used with a button of style 6',
      ),
    );
  });

  it('styles are 1 to 6', async () => {
    expect(await sendRows([row(button({ style: 7 }))])).toEqual(
      refused(`${first}.style`, 'BASE_TYPE_CHOICES', "Value must be one of ('1', '2', '3', '4', '5', '6')."),
    );
  });
});

describe('Select menus (types 3, 5–8)', () => {
  const select = 'components.0.components.0';

  it(`string select: ${ComponentLimits.selectOptions} options, labels and values of ${ComponentLimits.selectOptionLabel}`, async () => {
    await sent({ components: [row(stringSelect({ options: options(25), max_values: 25, min_values: 25 }))] });
    expect(await sendRows([row(stringSelect({ options: options(26) }))])).toEqual(
      badLength(`${select}.options`, 1, 25),
    );
    expect(await sendRows([row(stringSelect({ options: [] }))])).toEqual(
      badLength(`${select}.options`, 1, 25),
    );
    await sent({
      components: [row(stringSelect({ options: [{ label: 'l'.repeat(100), value: 'v'.repeat(100) }] }))],
    });
    expect(
      await sendRows([row(stringSelect({ options: [{ label: 'l'.repeat(101), value: 'v' }] }))]),
    ).toEqual(badLength(`${select}.options.0.label`, 1, 100));
    expect(
      await sendRows([row(stringSelect({ options: [{ label: 'l', value: 'v'.repeat(101) }] }))]),
    ).toEqual(badLength(`${select}.options.0.value`, 1, 100));
  });

  it(`placeholder of ${ComponentLimits.selectPlaceholder}; min_values 0–25, max_values 1–25`, async () => {
    await sent({ components: [row(stringSelect({ placeholder: 'p'.repeat(150), min_values: 0 }))] });
    expect(await sendRows([row(stringSelect({ placeholder: 'p'.repeat(151) }))])).toEqual(
      refused(`${select}.placeholder`, 'BASE_TYPE_MAX_LENGTH', 'Must be 150 or fewer in length.'),
    );
    expect(await sendRows([row(stringSelect({ min_values: 26 }))])).toEqual(
      refused(`${select}.min_values`, 'NUMBER_TYPE_MAX', 'int value should be less than or equal to 25.'),
    );
    expect(await sendRows([row(stringSelect({ max_values: 0 }))])).toEqual(
      refused(`${select}.max_values`, 'NUMBER_TYPE_MIN', 'int value should be greater than or equal to 1.'),
    );
    expect(await sendRows([row(stringSelect({ max_values: 26 }))])).toEqual(
      refused(`${select}.max_values`, 'NUMBER_TYPE_MAX', 'int value should be less than or equal to 25.'),
    );
  });

  it('max_values cannot exceed the options, nor min_values max_values; option values are unique', async () => {
    expect(await sendRows([row(stringSelect({ max_values: 4 }))])).toEqual(
      refused(`${select}.max_values`, 'NUMBER_TYPE_MAX', 'int value should be less than or equal to 3.'),
    );
    expect(await sendRows([row(stringSelect({ min_values: 3, max_values: 2 }))])).toEqual(
      refused(`${select}.min_values`, 'NUMBER_TYPE_MAX', 'int value should be less than or equal to 2.'),
    );
    const twice = [
      { label: 'a', value: 'same' },
      { label: 'b', value: 'same' },
    ];
    expect(await sendRows([row(stringSelect({ options: twice }))])).toEqual(
      refused(
        `${select}.options.1.value`,
        'SELECT_COMPONENT_OPTION_VALUE_DUPLICATED',
        'Select component option value cannot be duplicated',
      ),
    );
  });

  it('user, role, mentionable and channel selects keep default_values {id, type} of the kinds they offer (seed)', async () => {
    const message = await sent({
      components: [
        row({ type: 5, custom_id: 'who', default_values: [{ id: SNOWFLAKE, type: 'user' }] }),
        row({ type: 6, custom_id: 'role', default_values: [{ id: SNOWFLAKE, type: 'role' }] }),
        row({
          type: 7,
          custom_id: 'any',
          max_values: 2,
          default_values: [
            { id: SNOWFLAKE, type: 'user' },
            { id: '175928847299117064', type: 'role' },
          ],
        }),
        row({
          type: 8,
          custom_id: 'where',
          channel_types: [0, 5],
          default_values: [{ id: channelId, type: 'channel' }],
        }),
      ],
    });
    expect(message.components.map((r) => (r['components'] as Json[])[0])).toEqual([
      {
        type: 5,
        id: 2,
        custom_id: 'who',
        min_values: 1,
        max_values: 1,
        default_values: [{ id: SNOWFLAKE, type: 'user' }],
      },
      {
        type: 6,
        id: 4,
        custom_id: 'role',
        min_values: 1,
        max_values: 1,
        default_values: [{ id: SNOWFLAKE, type: 'role' }],
      },
      {
        type: 7,
        id: 6,
        custom_id: 'any',
        min_values: 1,
        max_values: 2,
        default_values: [
          { id: SNOWFLAKE, type: 'user' },
          { id: '175928847299117064', type: 'role' },
        ],
      },
      {
        type: 8,
        id: 8,
        custom_id: 'where',
        min_values: 1,
        max_values: 1,
        channel_types: [0, 5],
        default_values: [{ id: channelId, type: 'channel' }],
      },
    ]);
  });

  it('a default value of a kind the menu does not offer, a count outside min–max, an id that is no snowflake', async () => {
    expect(
      await sendRows([row({ type: 5, custom_id: 'u', default_values: [{ id: SNOWFLAKE, type: 'role' }] })]),
    ).toEqual(
      refused(`${select}.default_values.0.type`, 'BASE_TYPE_CHOICES', "Value must be one of ('user')."),
    );
    expect(
      await sendRows([row({ type: 8, custom_id: 'c', default_values: [{ id: SNOWFLAKE, type: 'user' }] })]),
    ).toEqual(
      refused(`${select}.default_values.0.type`, 'BASE_TYPE_CHOICES', "Value must be one of ('channel')."),
    );
    const two = [
      { id: SNOWFLAKE, type: 'user' },
      { id: '175928847299117064', type: 'user' },
    ];
    expect(await sendRows([row({ type: 5, custom_id: 'u', default_values: two })])).toEqual(
      badLength(`${select}.default_values`, 1, 1),
    );
    expect(
      await sendRows([row({ type: 5, custom_id: 'u', default_values: [{ id: 'me', type: 'user' }] })]),
    ).toEqual(refused(`${select}.default_values.0.id`, 'NUMBER_TYPE_COERCE', 'Value "me" is not snowflake.'));
  });

  it('channel_types are channel types, each once', async () => {
    expect(await sendRows([row({ type: 8, custom_id: 'c', channel_types: [0, 0] })])).toEqual(
      refused(`${select}.channel_types`, 'BASE_TYPE_INVALID', 'Invalid value.'),
    );
  });
});

describe('Components V2 (IS_COMPONENTS_V2, 1 << 15)', () => {
  it('stores a layout tree with sequential ids in document order and the platform defaults', async () => {
    const message = await sent({
      flags: V2,
      components: [
        text('# Season results'),
        {
          type: 17,
          accent_color: 0x5865f2,
          components: [
            {
              type: 9,
              components: [text('Blue team'), text('3 wins')],
              accessory: { type: 11, media: { url: 'https://example.com/blue.png' } },
            },
            { type: 14 },
            { type: 12, items: [{ media: { url: 'https://example.com/1.png' }, description: 'Round 1' }] },
            row(button({ custom_id: 'rematch' })),
          ],
        },
        { type: 14, spacing: 2, divider: false },
      ],
    });
    expect(message).toMatchObject({ content: '', embeds: [], flags: V2 });
    const media = (url: string) => ({
      id: expect.any(String),
      url,
      proxy_url: url,
      width: null,
      height: null,
      content_type: null,
    });
    expect(message.components).toEqual([
      { type: 10, id: 1, content: '# Season results' },
      {
        type: 17,
        id: 2,
        accent_color: 0x5865f2,
        spoiler: false,
        components: [
          {
            type: 9,
            id: 3,
            components: [
              { type: 10, id: 4, content: 'Blue team' },
              { type: 10, id: 5, content: '3 wins' },
            ],
            accessory: {
              type: 11,
              id: 6,
              media: media('https://example.com/blue.png'),
              description: null,
              spoiler: false,
            },
          },
          { type: 14, id: 7, spacing: 1, divider: true },
          {
            type: 12,
            id: 8,
            items: [{ media: media('https://example.com/1.png'), description: 'Round 1', spoiler: false }],
          },
          { type: 1, id: 9, components: [{ type: 2, id: 10, style: 1, label: 'Go', custom_id: 'rematch' }] },
        ],
      },
      { type: 14, id: 11, spacing: 2, divider: false },
    ]);
  });

  it('ids the sender chose are kept and skipped by the numbering; a repeated id is refused', async () => {
    const message = await sent({ flags: V2, components: [text('a'), { ...text('b'), id: 1 }, text('c')] });
    expect(message.components.map((c) => c['id'])).toEqual([2, 1, 3]);
    expect(
      await sendV2([
        { ...text('a'), id: 7 },
        { ...text('b'), id: 7 },
      ]),
    ).toEqual(refused('components.1.id', 'COMPONENT_ID_DUPLICATED', 'Component id cannot be duplicated'));
  });

  it(`${ComponentLimits.componentsV2Total} components in total, counted through containers; no top-level limit`, async () => {
    const texts = (n: number) => Array.from({ length: n }, (_, i) => text(`t${i}`));
    await sent({ flags: V2, components: texts(40) });
    expect(await sendV2(texts(41))).toEqual(
      refused('components', 'BASE_TYPE_MAX_LENGTH', 'Must be 40 or fewer in length.'),
    );
    await sent({ flags: V2, components: [{ type: 17, components: texts(39) }] });
    expect(await sendV2([{ type: 17, components: texts(40) }])).toEqual(
      refused('components', 'BASE_TYPE_MAX_LENGTH', 'Must be 40 or fewer in length.'),
    );
  });

  it('content and embeds cannot go with the flag', async () => {
    expect(await sendV2([text()], { content: 'hi' })).toEqual(
      refused(
        'content',
        'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
        "The 'content' field cannot be used when using MessageFlags.IS_COMPONENTS_V2",
      ),
    );
    expect(await sendV2([text()], { embeds: [{ title: 'x' }] })).toEqual(
      refused(
        'embeds',
        'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
        "The 'embeds' field cannot be used when using MessageFlags.IS_COMPONENTS_V2",
      ),
    );
  });

  it('a section holds 1 to 3 text displays and one accessory, a button or a thumbnail', async () => {
    const section = (components: unknown[], accessory: unknown = button()) => ({
      type: 9,
      components,
      accessory,
    });
    await sent({ flags: V2, components: [section([text(), text(), text()])] });
    expect(await sendV2([section([text(), text(), text(), text()])])).toEqual(
      badLength('components.0.components', 1, 3),
    );
    expect(await sendV2([section([])])).toEqual(badLength('components.0.components', 1, 3));
    expect(await sendV2([section([text()], text())])).toEqual(
      refused(
        'components.0.accessory',
        'UNION_TYPE_CHOICES',
        'Value of field "type" must be one of (2, 11).',
      ),
    );
    expect(await sendV2([{ type: 9, components: [text()] }])).toEqual(
      refused('components.0.accessory', 'BASE_TYPE_REQUIRED', 'This field is required'),
    );
    expect(await sendV2([section([button()])])).toEqual(
      refused(
        'components.0.components.0',
        'UNION_TYPE_CHOICES',
        'Value of field "type" must be one of (10,).',
      ),
    );
  });

  it('a container holds no container; text displays hold 1 to 4000 characters', async () => {
    expect(await sendV2([{ type: 17, components: [text(), { type: 17, components: [text()] }] }])).toEqual(
      refused(
        'components.0.components.1',
        'UNION_TYPE_CHOICES',
        'Value of field "type" must be one of (1, 9, 10, 12, 13, 14).',
      ),
    );
    await sent({ flags: V2, components: [text('t'.repeat(ComponentLimits.textDisplayContent))] });
    expect(await sendV2([text('t'.repeat(ComponentLimits.textDisplayContent + 1))])).toEqual(
      badLength('components.0.content', 1, 4000),
    );
  });

  it(`a media gallery holds 1 to ${ComponentLimits.mediaGalleryItemsMax} items of http(s) or attachment media`, async () => {
    const items = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ media: { url: `https://e.com/${i}.png` } }));
    await sent({ flags: V2, components: [{ type: 12, items: items(10) }] });
    expect(await sendV2([{ type: 12, items: items(11) }])).toEqual(badLength('components.0.items', 1, 10));
    expect(await sendV2([{ type: 12, items: [{ media: { url: 'ftp://e.com/x.png' } }] }])).toEqual(
      refused(
        'components.0.items.0.media.url',
        'URL_TYPE_INVALID_SCHEME',
        `Scheme "ftp" is not supported. Scheme must be one of ('http', 'https', 'attachment').`,
      ),
    );
  });

  it('a file component names an upload of the message: attachment://<filename>', async () => {
    expect(await sendV2([{ type: 13, file: { url: 'https://e.com/a.txt' } }])).toEqual(
      refused(
        'components.0.file.url',
        'UNFURLED_MEDIA_ITEM_ATTACHMENT_REQUIRED',
        'The url must be an attachment:// reference',
      ),
    );
    expect(await sendV2([{ type: 13, file: { url: 'attachment://missing.txt' } }])).toEqual(
      refused(
        'components.0.file.url',
        'UNFURLED_MEDIA_ITEM_ATTACHMENT_NOT_FOUND',
        'The message has no attachment named "missing.txt"',
      ),
    );
  });

  it('a file component resolves to the uploaded file (multipart upload)', async () => {
    const form = new FormData();
    form.set(
      'payload_json',
      JSON.stringify({
        flags: V2,
        attachments: [{ id: 0, filename: 'notes.txt' }],
        components: [{ type: 13, file: { url: 'attachment://notes.txt' }, spoiler: true }],
      }),
    );
    form.set('files[0]', new Blob(['patch notes'], { type: 'text/plain' }), 'notes.txt');
    const answer = await call('POST', `/channels/${channelId}/messages`, form);
    expect(answer.status).toBe(200);
    const attachment = (answer.body['attachments'] as Json[])[0] as Json;
    expect(answer.body['components']).toEqual([
      {
        type: 13,
        id: 1,
        file: expect.objectContaining({ url: attachment['url'], attachment_id: attachment['id'] }),
        name: 'notes.txt',
        size: 11,
        spoiler: true,
      },
    ]);
  });
});

describe('Edit Message: components and the IS_COMPONENTS_V2 flag', () => {
  it('replaces the rows, and refuses a sixth row leaving the message as it was', async () => {
    const message = await sent({ content: 'vote', components: [row(button({ custom_id: 'one' }))] });
    const path = `/channels/${channelId}/messages/${message.id}`;
    const edited = await call('PATCH', path, {
      components: [row(button({ custom_id: 'two', label: 'Two' }))],
    });
    expect(edited.body['components']).toEqual([
      { type: 1, id: 1, components: [{ type: 2, id: 2, style: 1, label: 'Two', custom_id: 'two' }] },
    ]);
    const six = Array.from({ length: 6 }, () => row(button()));
    expect(await call('PATCH', path, { components: six })).toEqual(
      refused('components', 'BASE_TYPE_MAX_LENGTH', 'Must be 5 or fewer in length.'),
    );
    expect((await call('GET', path)).body['components']).toEqual(edited.body['components']);
  });

  it('the flag stays once set (GUILDS.md §4.3), and so content and embeds stay out', async () => {
    const message = await sent({ flags: V2, components: [text()] });
    const path = `/channels/${channelId}/messages/${message.id}`;
    expect(await call('PATCH', path, { flags: 0, content: 'now with text' })).toEqual(
      refused(
        'content',
        'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
        "The 'content' field cannot be used when using MessageFlags.IS_COMPONENTS_V2",
      ),
    );
    const edited = await call('PATCH', path, { components: [text('changed')] });
    expect(edited.body).toMatchObject({ flags: V2, components: [{ type: 10, id: 1, content: 'changed' }] });
  });

  it('an edit checks V2 components against the stored flag: a container needs no flag in the body', async () => {
    const message = await sent({ flags: V2, components: [text()] });
    const edited = await call('PATCH', `/channels/${channelId}/messages/${message.id}`, {
      components: [{ type: 17, components: [text('inside')] }],
    });
    expect(edited.status).toBe(200);
    expect(edited.body['components']).toEqual([
      {
        type: 17,
        id: 1,
        accent_color: null,
        spoiler: false,
        components: [{ type: 10, id: 2, content: 'inside' }],
      },
    ]);
  });
});

import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { click, connect, postComponents, type Scene, scene } from './support.js';

/**
 * Modals (DOCS components reference; seed: Limits "File upload component", "File upload"; Versioning): label
 * components, the deprecated action-row layout, the file upload component's 0–10 bounds, uploads limited
 * by `attachment_size_limit` (10 MiB from 16 January 2025), and submissions checked against the modal shown.
 */

const MiB = 1024 * 1024;
const clock = new ManualClock('2026-03-01T00:00:00Z');
let hearth: TestHearth;
let s: Scene;
let bot: GatewayClient;
let user: GatewayClient;
let messageId: string;

type Interaction = { id: string; token: string; application_id: string };

function modal(upload: Record<string, unknown> = { min_values: 0, max_values: 10 }) {
  return {
    custom_id: 'survey',
    title: 'Tell us',
    components: [
      { type: 10, content: 'A few questions' },
      {
        type: 18,
        label: 'Name',
        component: { type: 4, custom_id: 'name', style: 1, min_length: 2, max_length: 20 },
      },
      {
        type: 18,
        label: 'Wood',
        component: {
          type: 3,
          custom_id: 'wood',
          options: [
            { label: 'Ash', value: 'ash' },
            { label: 'Oak', value: 'oak' },
          ],
        },
      },
      {
        type: 18,
        label: 'Pictures',
        component: { type: 19, custom_id: 'pictures', required: false, ...upload },
      },
      // The deprecated layout is still accepted (seed: Versioning).
      { type: 1, components: [{ type: 4, custom_id: 'notes', style: 2, label: 'Notes', required: false }] },
    ],
  };
}

async function clicked(): Promise<Interaction> {
  expect((await click(hearth, s, messageId)).status).toBe(204);
  const frame = await bot.nextDispatch('INTERACTION_CREATE');
  return frame.d as Interaction;
}

function callback(i: Interaction, body: unknown) {
  return hearth.api(`/interactions/${i.id}/${i.token}/callback`, { method: 'POST', body });
}

/** Shows the modal; answers its id as the user's INTERACTION_MODAL_CREATE told it. */
async function shown(): Promise<string> {
  const i = await clicked();
  expect((await callback(i, { type: 9, data: modal() })).status).toBe(204);
  const frame = await user.nextDispatch('INTERACTION_MODAL_CREATE');
  return (frame.d as { id: string }).id;
}

function submit(modalId: string, components: unknown[], files: Blob[] = [], customId = 'survey') {
  const payload = {
    type: 5,
    application_id: s.game.id,
    guild_id: s.guild.id,
    channel_id: s.channelId,
    data: { id: modalId, custom_id: customId, components },
  };
  if (files.length === 0)
    return hearth.api('/interactions', { method: 'POST', auth: s.member.token, body: payload });
  const form = new FormData();
  form.set('payload_json', JSON.stringify(payload));
  for (const [index, file] of files.entries()) form.set(`files[${index}]`, file, `picture${index}.png`);
  return hearth.api('/interactions', { method: 'POST', auth: s.member.token, body: form });
}

const answers = (pictures: string[]) => [
  { type: 18, component: { type: 4, custom_id: 'name', value: 'Ada' } },
  { type: 18, component: { type: 3, custom_id: 'wood', values: ['oak'] } },
  { type: 18, component: { type: 19, custom_id: 'pictures', values: pictures } },
  { type: 1, components: [{ type: 4, custom_id: 'notes', value: '' }] },
];

beforeAll(async () => {
  hearth = await startHearth({}, clock);
  s = await scene(hearth, 'Modals');
  messageId = await postComponents(hearth, s);
  bot = await connect(hearth, s.game.botToken);
  user = await connect(hearth, s.member.token);
});

afterAll(async () => {
  await bot.close();
  await user.close();
  await hearth.close();
});

describe('MODAL response', () => {
  it('shows the modal to the invoking user, with labels, a text display and the old action-row layout', async () => {
    const i = await clicked();
    expect((await callback(i, { type: 9, data: modal() })).status).toBe(204);
    const frame = await user.nextDispatch('INTERACTION_MODAL_CREATE');
    expect(frame.d).toMatchObject({
      application_id: s.game.id,
      channel_id: s.channelId,
      custom_id: 'survey',
      title: 'Tell us',
      components: [
        { type: 10, id: 1 },
        { type: 18, id: 2, label: 'Name', component: { type: 4, custom_id: 'name', id: 3 } },
        { type: 18, label: 'Wood' },
        { type: 18, label: 'Pictures', component: { type: 19, min_values: 0, max_values: 10 } },
        { type: 1, components: [{ type: 4, custom_id: 'notes', label: 'Notes' }] },
      ],
    });
  });

  it('file upload min_values and max_values go from 0 to 10: 11 is refused', async () => {
    const i = await clicked();
    const eleven = await callback(i, { type: 9, data: modal({ min_values: 0, max_values: 11 }) });
    expect(eleven.status).toBe(400);
    expect(await eleven.json()).toMatchObject({
      code: 50035,
      errors: {
        data: {
          components: { 3: { component: { max_values: { _errors: [{ code: 'NUMBER_TYPE_MAX' }] } } } },
        },
      },
    });
    const minEleven = await callback(i, { type: 9, data: modal({ min_values: 11, max_values: 10 }) });
    expect(minEleven.status).toBe(400);
    expect((await callback(i, { type: 9, data: modal({ min_values: 10, max_values: 10 }) })).status).toBe(
      204,
    );
    const frame = await user.nextDispatch('INTERACTION_MODAL_CREATE');
    expect((frame.d as { components: unknown[] }).components[3]).toMatchObject({
      component: { type: 19, min_values: 10, max_values: 10 },
    });
  });

  it('refuses a text input outside a label or action row, and an action row without a label on its input', async () => {
    const i = await clicked();
    const bare = await callback(i, {
      type: 9,
      data: { custom_id: 'm', title: 't', components: [{ type: 4, custom_id: 'x', style: 1 }] },
    });
    expect(bare.status).toBe(400);
    const unlabelled = await callback(i, {
      type: 9,
      data: {
        custom_id: 'm',
        title: 't',
        components: [{ type: 1, components: [{ type: 4, custom_id: 'x', style: 1 }] }],
      },
    });
    expect(unlabelled.status).toBe(400);
    expect((await callback(i, { type: 6 })).status).toBe(204);
  });
});

describe('MODAL_SUBMIT', () => {
  it('reaches the app in the shape discord.js reads, with the uploads resolved, at exactly 10 MiB', async () => {
    const modalId = await shown();
    const response = await submit(modalId, answers(['0']), [new Blob([new Uint8Array(10 * MiB)])]);
    expect(response.status).toBe(204);
    const frame = await bot.nextDispatch('INTERACTION_CREATE');
    const d = frame.d as Interaction & Record<string, unknown>;
    expect(d).toMatchObject({
      type: 5,
      attachment_size_limit: 10 * MiB,
      message: { id: messageId },
      data: {
        custom_id: 'survey',
        components: [
          { type: 10, id: 1 },
          { type: 18, id: 2, component: { type: 4, id: 3, custom_id: 'name', value: 'Ada' } },
          { type: 18, component: { type: 3, custom_id: 'wood', values: ['oak'] } },
          { type: 18, component: { type: 19, custom_id: 'pictures' } },
          { type: 1, components: [{ type: 4, custom_id: 'notes', value: '' }] },
        ],
      },
    });
    // The upload is stored as message attachments are: the value names it, its `url` serves its bytes.
    const data = d['data'] as {
      components: { component?: { values?: string[] } }[];
      resolved: { attachments: Record<string, Record<string, unknown>> };
    };
    const [attachmentId] = data.components[3]!.component!.values!;
    expect(attachmentId).toMatch(/^\d{17,20}$/);
    const attachment = data.resolved.attachments[attachmentId!]!;
    expect(attachment).toMatchObject({ id: attachmentId, filename: 'picture0.png', size: 10 * MiB });
    expect(attachment['proxy_url']).toBe(attachment['url']);
    const served = await fetch(attachment['url'] as string);
    expect(served.status).toBe(200);
    expect((await served.arrayBuffer()).byteLength).toBe(10 * MiB);
    // A modal submit takes no modal; a message reply carries the triggering interaction's metadata.
    expect((await callback(d, { type: 9, data: modal() })).status).toBe(400);
    expect((await callback(d, { type: 4, data: { content: 'Thanks' } })).status).toBe(204);
    const reply = await user.nextDispatch('MESSAGE_CREATE');
    expect(reply.d).toMatchObject({
      content: 'Thanks',
      interaction_metadata: {
        id: d.id,
        type: 5,
        user: { id: s.member.id },
        triggering_interaction_metadata: { type: 3 },
      },
    });
  });

  it('an upload one byte past attachment_size_limit is refused with 40005', async () => {
    const modalId = await shown();
    const response = await submit(modalId, answers(['0']), [new Blob([new Uint8Array(10 * MiB + 1)])]);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ code: 40005, message: 'Request entity too large' });
  });

  it('answers are checked against the modal shown', async () => {
    const modalId = await shown();
    const short = await submit(modalId, [
      { type: 18, component: { type: 4, custom_id: 'name', value: 'A' } },
      { type: 18, component: { type: 3, custom_id: 'wood', values: ['oak'] } },
    ]);
    expect(short.status).toBe(400);
    expect(await short.json()).toMatchObject({
      code: 50035,
      errors: { data: { components: { 0: { value: {} } } } },
    });
    const badOption = await submit(modalId, [
      { type: 18, component: { type: 4, custom_id: 'name', value: 'Ada' } },
      { type: 18, component: { type: 3, custom_id: 'wood', values: ['pine'] } },
    ]);
    expect(badOption.status).toBe(400);
    const unknownField = await submit(modalId, [
      ...answers([]),
      { type: 18, component: { type: 4, custom_id: 'extra', value: 'x' } },
    ]);
    expect(unknownField.status).toBe(400);
    const missingFile = await submit(modalId, answers(['0']));
    expect(missingFile.status).toBe(400);
    // The modal is still open: a good submission is taken once, then it is gone.
    expect((await submit(modalId, answers([]))).status).toBe(204);
    await bot.nextDispatch('INTERACTION_CREATE');
    const twice = await submit(modalId, answers([]));
    expect(twice.status).toBe(404);
    expect(await twice.json()).toEqual({ code: 10062, message: 'Unknown interaction' });
  });

  it('a submit for a modal never shown, or with another custom id, answers 10062', async () => {
    expect((await submit('1234567890123456789', answers([]))).status).toBe(404);
    const modalId = await shown();
    expect((await submit(modalId, answers([]), [], 'other')).status).toBe(404);
  });
});

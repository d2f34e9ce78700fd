import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REST } from '@discordjs/rest';
import { AttachmentFlags, Limits, MessageLimits, PermissionFlags } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { type APIAttachment, type APIMessage, Routes } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addTestBot, setEveryonePermissions } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';
import { solidPng } from '../../src/domains/accounts/images.js';
import {
  call,
  createRoom,
  invalidForm,
  MEMBER_PERMISSIONS,
  MISSING_PERMISSIONS,
  type Room,
} from './support.js';

/**
 * Attachments (GUILDS.md §4.8; seed: Attachment request, Limits "file upload"): `files[n]` parts with
 * `payload_json`, the attachment objects, the dated per-file limit, the files on disk and served back.
 */

const MiB = 1024 * 1024;
const TOO_LARGE = { code: 40005, message: 'Request entity too large' };
const AFTER_LIMIT_CHANGE = '2025-02-01T00:00:00Z';
const BEFORE_LIMIT_CHANGE = '2025-01-10T00:00:00Z';

interface FilePart {
  name?: string;
  filename: string;
  bytes: Uint8Array;
  type?: string;
}

/** A multipart body as clients build it: `payload_json`, then `files[n]` (or the part name given). */
function form(payload: unknown, files: readonly FilePart[]): FormData {
  const body = new FormData();
  if (payload !== undefined) body.set('payload_json', JSON.stringify(payload));
  for (const [n, file] of files.entries()) {
    const blob = new Blob([file.bytes], file.type === undefined ? {} : { type: file.type });
    body.append(file.name ?? `files[${n}]`, blob, file.filename);
  }
  return body;
}

const text = (value: string) => new TextEncoder().encode(value);

/** Every file under `dir`, as paths relative to it (none when it does not exist). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

/** The bytes at an attachment's `url`, fetched as any client would. */
async function download(url: string): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const response = await fetch(url);
  return {
    status: response.status,
    headers: response.headers,
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

// Minimal headers of each image type: enough bytes for the size, as a client's upload starts.
const GIF = Buffer.concat([
  Buffer.from('GIF89a'),
  Buffer.from([0x20, 0x03, 0x58, 0x02, 0, 0, 0]),
  Buffer.from([0x3b]),
]);
const WEBP_VP8X = (() => {
  const bytes = Buffer.alloc(30);
  bytes.write('RIFF', 0, 'latin1');
  bytes.writeUInt32LE(22, 4);
  bytes.write('WEBPVP8X', 8, 'latin1');
  bytes.writeUInt32LE(10, 16);
  bytes.writeUIntLE(1919, 24, 3);
  bytes.writeUIntLE(1079, 27, 3);
  return bytes;
})();
const JPEG = Buffer.from([
  0xff,
  0xd8, // SOI
  0xff,
  0xe0,
  0x00,
  0x06,
  0x4a,
  0x46,
  0x49,
  0x46, // APP0 (4 bytes of data)
  0xff,
  0xc0,
  0x00,
  0x0b,
  0x08,
  0x01,
  0xe0,
  0x02,
  0x80,
  0x01,
  0x01,
  0x11,
  0x00, // SOF0: 480 × 640
  0xff,
  0xd9, // EOI
]);

describe('Attachments (GUILDS.md §4.8)', () => {
  let hearth: TestHearth;
  let dataDir: string;
  let room: Room;

  beforeAll(async () => {
    dataDir = join(tmpdir(), `hearth-attachments-${randomUUID()}`);
    hearth = await startHearth({ rateLimitGlobal: 1_000_000, dataDir });
    room = await createRoom(hearth);
  });
  afterAll(async () => {
    await hearth.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const send = (body: FormData | unknown, token = room.member.token, channelId = room.channelId) =>
    call(hearth, `/channels/${channelId}/messages`, { method: 'POST', auth: token, body });
  const edit = (messageId: string, body: FormData | unknown, token = room.member.token) =>
    call(hearth, `/channels/${room.channelId}/messages/${messageId}`, { method: 'PATCH', auth: token, body });

  it('a file sent with payload_json becomes an attachment object whose url serves the same bytes', async () => {
    const png = solidPng(64, 0x336699);
    const sent = await send(
      form({ content: 'a picture', attachments: [{ id: 0, description: 'a blue square' }] }, [
        { filename: 'square.png', bytes: png, type: 'image/png' },
      ]),
    );
    expect(sent.status).toBe(200);
    expect(sent.body.content).toBe('a picture');
    const [attachment] = sent.body.attachments;
    expect(attachment).toEqual({
      id: expect.stringMatching(/^\d+$/),
      filename: 'square.png',
      description: 'a blue square',
      content_type: 'image/png',
      size: png.length,
      url: `${hearth.url}/attachments/${room.channelId}/${attachment!.id}/square.png`,
      proxy_url: `${hearth.url}/attachments/${room.channelId}/${attachment!.id}/square.png`,
      width: 64,
      height: 64,
    });

    const served = await download(attachment!.url);
    expect(served.status).toBe(200);
    expect(served.bytes.equals(png)).toBe(true);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('content-length')).toBe(String(png.length));
    expect(served.headers.get('content-disposition')).toMatch(/^inline; filename="square.png"/);

    // The message read back carries the same object.
    const read = await call(hearth, `/channels/${room.channelId}/messages/${sent.body.id}`, {
      auth: room.member.token,
    });
    expect(read.body.attachments).toEqual(sent.body.attachments);
  });

  it('serves a binary file of several chunks byte for byte, as a download with its type', async () => {
    const bytes = randomBytes(3 * MiB + 17);
    const sent = await send(form({}, [{ filename: 'blob.bin', bytes }]));
    expect(sent.status).toBe(200);
    const [attachment] = sent.body.attachments;
    expect(attachment).toMatchObject({ filename: 'blob.bin', size: bytes.length });
    expect(attachment).not.toHaveProperty('content_type');
    const served = await download(attachment!.url);
    expect(served.bytes.equals(bytes)).toBe(true);
    expect(served.headers.get('content-type')).toBe('application/octet-stream');
    expect(served.headers.get('content-disposition')).toBe(
      `attachment; filename="blob.bin"; filename*=UTF-8''blob.bin`,
    );
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('names files without spaces or directories; an HTML upload is served as a download, never inline', async () => {
    const sent = await send(
      form({}, [{ filename: 'my page.html', bytes: text('<script>alert(1)</script>'), type: 'text/html' }]),
    );
    const [attachment] = sent.body.attachments;
    expect(attachment).toMatchObject({ filename: 'my_page.html', content_type: 'text/html' });
    const served = await download(attachment!.url);
    expect(served.headers.get('content-type')).toBe('text/html');
    expect(served.headers.get('content-disposition')).toMatch(/^attachment;/);
  });

  it('reads width and height of PNG, GIF, WebP and JPEG files; other files have none', async () => {
    const sent = await send(
      form({}, [
        { filename: 'a.png', bytes: solidPng(16, 0) },
        { filename: 'b.gif', bytes: GIF },
        { filename: 'c.webp', bytes: WEBP_VP8X },
        { filename: 'd.jpg', bytes: JPEG },
        { filename: 'e.txt', bytes: text('not an image') },
      ]),
    );
    expect(sent.status).toBe(200);
    expect(
      sent.body.attachments.map(({ content_type, width, height }) => ({ content_type, width, height })),
    ).toEqual([
      { content_type: 'image/png', width: 16, height: 16 },
      { content_type: 'image/gif', width: 800, height: 600 },
      { content_type: 'image/webp', width: 1920, height: 1080 },
      { content_type: 'image/jpeg', width: 640, height: 480 },
      { content_type: 'text/plain', width: undefined, height: undefined },
    ]);
  });

  it('IS_SPOILER comes from is_spoiler: true or from a SPOILER_ file name, and only from them', async () => {
    const sent = await send(
      form({ attachments: [{ id: 0, is_spoiler: true }, { id: 1 }, { id: 2, is_spoiler: false }] }, [
        { filename: 'plain-name.txt', bytes: text('one') },
        { filename: 'SPOILER_named.txt', bytes: text('two') },
        { filename: 'visible.txt', bytes: text('three') },
      ]),
    );
    expect(sent.status).toBe(200);
    expect(sent.body.attachments.map((a) => [a.filename, a.flags])).toEqual([
      ['plain-name.txt', AttachmentFlags.IsSpoiler],
      ['SPOILER_named.txt', AttachmentFlags.IsSpoiler],
      ['visible.txt', undefined],
    ]);
  });

  it('orders attachments as the body lists them, then the files it does not name; renames by filename', async () => {
    const sent = await send(
      form({ attachments: [{ id: '2', filename: 'renamed.txt', title: 'Third' }, { id: 0 }] }, [
        { filename: 'zero.txt', bytes: text('0') },
        { filename: 'one.txt', bytes: text('1') },
        { filename: 'two.txt', bytes: text('2') },
      ]),
    );
    expect(sent.status).toBe(200);
    expect(sent.body.attachments.map((a) => [a.filename, a.title])).toEqual([
      ['renamed.txt', 'Third'],
      ['zero.txt', undefined],
      ['one.txt', undefined],
    ]);
    const renamed = await download(sent.body.attachments[0]!.url);
    expect(renamed.bytes.toString()).toBe('2');
  });

  it('takes 10 attachments and refuses 11 (50035 at attachments), storing nothing', async () => {
    const files = (count: number) =>
      Array.from({ length: count }, (_, n) => ({ filename: `f${n}.txt`, bytes: text(`file ${n}`) }));
    const ten = await send(form({}, files(MessageLimits.attachmentsMax)));
    expect(ten.status).toBe(200);
    expect(ten.body.attachments).toHaveLength(10);

    const before = await filesUnder(dataDir);
    const eleven = await send(form({}, files(MessageLimits.attachmentsMax + 1)));
    expect([eleven.status, eleven.body]).toEqual([
      400,
      invalidForm({
        attachments: {
          _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 10 or fewer in length.' }],
        },
      }),
    ]);
    const listed = await send(
      form({ attachments: Array.from({ length: 11 }, (_, id) => ({ id })) }, files(1)),
    );
    expect([listed.status, listed.body]).toEqual([
      400,
      invalidForm({
        attachments: {
          _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 10 or fewer in length.' }],
        },
      }),
    ]);
    expect(await filesUnder(dataDir)).toEqual(before);
  });

  it('checks the attachment request: description of 1024 passes, 1025 is refused; ids must name a file', async () => {
    const ok = await send(
      form({ attachments: [{ id: 0, description: 'd'.repeat(1024) }] }, [
        { filename: 'a.txt', bytes: text('a') },
      ]),
    );
    expect(ok.status).toBe(200);
    expect(ok.body.attachments[0]!.description).toHaveLength(1024);

    const before = await filesUnder(dataDir);
    const long = await send(
      form({ attachments: [{ id: 0, description: 'd'.repeat(1025) }] }, [
        { filename: 'a.txt', bytes: text('a') },
      ]),
    );
    expect([long.status, long.body]).toEqual([
      400,
      invalidForm({
        attachments: {
          '0': {
            description: {
              _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 1024 or fewer in length.' }],
            },
          },
        },
      }),
    ]);
    const unknown = await send(
      form({ content: 'x', attachments: [{ id: 3 }] }, [{ filename: 'a.txt', bytes: text('a') }]),
    );
    expect([unknown.status, unknown.body]).toEqual([
      400,
      invalidForm({
        attachments: { '0': { id: { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] } } },
      }),
    ]);
    expect(await filesUnder(dataDir)).toEqual(before);
  });

  it('needs ATTACH_FILES to upload (50013) and stores nothing without it', async () => {
    const other = await createRoom(hearth);
    await setEveryonePermissions(hearth, other.guild, MEMBER_PERMISSIONS & ~PermissionFlags.AttachFiles);
    const before = await filesUnder(dataDir);
    const refused = await send(
      form({ content: 'hi' }, [{ filename: 'a.txt', bytes: text('a') }]),
      other.member.token,
      other.channelId,
    );
    expect([refused.status, refused.body]).toEqual([403, MISSING_PERMISSIONS]);
    expect(await filesUnder(dataDir)).toEqual(before);
    // Text alone still goes.
    expect((await send(form({ content: 'hi' }, []), other.member.token, other.channelId)).status).toBe(200);
  });

  it('refuses malformed multipart bodies with the platform body, never a 500', async () => {
    const raw = (body: string, contentType: string) =>
      call(hearth, `/channels/${room.channelId}/messages`, {
        method: 'POST',
        auth: room.member.token,
        body,
        headers: { 'content-type': contentType },
      });
    const badForm = invalidForm({ _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] });
    const part = '--b\r\nContent-Disposition: form-data; name="files[0]"; filename="a.txt"\r\n\r\nabc\r\n';
    expect(await raw(`${part}--b--\r\n`, 'multipart/form-data')).toEqual({ status: 400, body: badForm });
    expect(await raw(part, 'multipart/form-data; boundary=b')).toEqual({ status: 400, body: badForm });
    expect(await raw('--b\r\nno headers end', 'multipart/form-data; boundary=b')).toEqual({
      status: 400,
      body: badForm,
    });
    expect(
      await raw('--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--', 'multipart/form-data; boundary=b'),
    ).toEqual({
      status: 400,
      body: badForm,
    });
    const broken = await raw(
      '--b\r\nContent-Disposition: form-data; name="payload_json"\r\n\r\n{"content":\r\n--b--',
      'multipart/form-data; boundary=b',
    );
    expect(broken).toEqual({
      status: 400,
      body: { code: 50109, message: 'The request body contains invalid JSON.' },
    });

    const misnamed = await send(
      form({ content: 'x' }, [{ name: 'upload', filename: 'a.txt', bytes: text('a') }]),
    );
    expect([misnamed.status, misnamed.body]).toEqual([
      400,
      invalidForm({ upload: { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] } }),
    ]);
    const twice = await send(
      form({ content: 'x' }, [
        { name: 'files[0]', filename: 'a.txt', bytes: text('a') },
        { name: 'files[0]', filename: 'b.txt', bytes: text('b') },
      ]),
    );
    expect([twice.status, twice.body]).toEqual([
      400,
      invalidForm({ 'files[0]': { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] } }),
    ]);
    expect(await filesUnder(join(dataDir, 'attachments', '.uploads'))).toEqual([]);
  });

  it('answers a body larger than the route takes with 413 and 40005 before reading it', async () => {
    const response = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(`/api/v10/channels/${room.channelId}/messages`, hearth.url);
      const req = httpRequest(url, {
        method: 'POST',
        headers: {
          authorization: room.member.token,
          'content-type': 'multipart/form-data; boundary=b',
          'content-length': String(300 * MiB),
        },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write('--b\r\n');
    });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toEqual(TOO_LARGE);
  });

  it('edit: `attachments` keeps the listed ones, removes the others and their files, and adds new files', async () => {
    const sent = await send(
      form({ content: 'three files' }, [
        { filename: 'keep.txt', bytes: text('keep') },
        { filename: 'drop.txt', bytes: text('drop') },
        { filename: 'also-keep.txt', bytes: text('also') },
      ]),
    );
    const [keep, drop, alsoKeep] = sent.body.attachments as [APIAttachment, APIAttachment, APIAttachment];
    const filesBefore = await filesUnder(dataDir);
    expect(filesBefore.some((path) => path.endsWith(drop.id))).toBe(true);

    // As discord.js sends it: kept attachments as whole objects, new files by index.
    const edited = await edit(
      sent.body.id,
      form({ attachments: [alsoKeep, { id: 0, description: 'new one' }, { id: keep.id }] }, [
        { filename: 'new.txt', bytes: text('new') },
      ]),
    );
    expect(edited.status).toBe(200);
    expect(edited.body.attachments.map((a) => a.filename)).toEqual(['also-keep.txt', 'new.txt', 'keep.txt']);
    expect(edited.body.attachments[1]!.description).toBe('new one');
    expect(edited.body.edited_timestamp).not.toBeNull();

    expect((await download(drop.url)).status).toBe(404);
    expect((await filesUnder(dataDir)).some((path) => path.endsWith(drop.id))).toBe(false);
    expect((await download(keep.url)).bytes.toString()).toBe('keep');
    expect((await download(edited.body.attachments[1]!.url)).bytes.toString()).toBe('new');

    // Without `attachments`, an edit keeps them all; an empty list removes them all.
    const content = await edit(sent.body.id, { content: 'text only now' });
    expect(content.body.attachments).toHaveLength(3);
    const cleared = await edit(sent.body.id, { attachments: [] });
    expect([cleared.status, cleared.body.attachments]).toEqual([200, []]);
    expect((await download(keep.url)).status).toBe(404);
  });

  it('edit: attachments of another message cannot be kept, and 10 in all is the limit', async () => {
    const other = await send(form({}, [{ filename: 'other.txt', bytes: text('o') }]));
    const mine = await send(form({}, [{ filename: 'mine.txt', bytes: text('m') }]));
    const stolen = await edit(mine.body.id, { attachments: [{ id: other.body.attachments[0]!.id }] });
    expect([stolen.status, stolen.body]).toEqual([
      400,
      invalidForm({
        attachments: { '0': { id: { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] } } },
      }),
    ]);
    const ten = Array.from({ length: 10 }, (_, n) => ({ filename: `n${n}.txt`, bytes: text(String(n)) }));
    const over = await edit(mine.body.id, form({}, ten));
    expect([over.status, over.body]).toEqual([
      400,
      invalidForm({
        attachments: {
          _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 10 or fewer in length.' }],
        },
      }),
    ]);
    const read = await call(hearth, `/channels/${room.channelId}/messages/${mine.body.id}`, {
      auth: room.member.token,
    });
    expect(read.body.attachments.map((a) => a.filename)).toEqual(['mine.txt']);
  });

  it('deleting the message removes its files; an unknown attachment url is a 404 platform body', async () => {
    const sent = await send(form({}, [{ filename: 'gone.txt', bytes: text('bye') }]));
    const [attachment] = sent.body.attachments as [APIAttachment];
    const deleted = await call(hearth, `/channels/${room.channelId}/messages/${sent.body.id}`, {
      method: 'DELETE',
      auth: room.member.token,
    });
    expect(deleted.status).toBe(204);
    const gone = await fetch(attachment.url);
    expect([gone.status, await gone.json()]).toEqual([404, { code: 0, message: '404: Not Found' }]);
    expect((await filesUnder(dataDir)).some((path) => path.endsWith(attachment.id))).toBe(false);

    const live = await send(form({}, [{ filename: 'here.txt', bytes: text('hi') }]));
    const url = new URL(live.body.attachments[0]!.url);
    const wrongName = await fetch(`${url.origin}${url.pathname.replace('here.txt', 'other.txt')}`);
    expect(wrongName.status).toBe(404);
    const badId = await fetch(`${hearth.url}/attachments/${room.channelId}/not-an-id/here.txt`);
    expect(badId.status).toBe(400);
  });

  it("deleting the channel removes its messages' files", async () => {
    const doomed = await createRoom(hearth);
    const sent = await send(
      form({}, [{ filename: 'doomed.txt', bytes: text('x') }]),
      doomed.member.token,
      doomed.channelId,
    );
    const [attachment] = sent.body.attachments as [APIAttachment];
    expect((await download(attachment.url)).status).toBe(200);
    const deleted = await call(hearth, `/channels/${doomed.channelId}`, {
      method: 'DELETE',
      auth: doomed.owner.token,
    });
    expect(deleted.status).toBe(200);
    expect((await download(attachment.url)).status).toBe(404);
    expect((await filesUnder(dataDir)).some((path) => path.endsWith(attachment.id))).toBe(false);
  });

  it("deleting the guild removes its messages' files", async () => {
    const doomed = await createRoom(hearth);
    const sent = await send(
      form({}, [{ filename: 'guild.txt', bytes: text('x') }]),
      doomed.member.token,
      doomed.channelId,
    );
    const [attachment] = sent.body.attachments as [APIAttachment];
    expect((await download(attachment.url)).status).toBe(200);
    const deleted = await call(hearth, `/guilds/${doomed.guild.id}`, {
      method: 'DELETE',
      auth: doomed.owner.token,
    });
    expect(deleted.status).toBe(204);
    expect((await download(attachment.url)).status).toBe(404);
    expect((await filesUnder(dataDir)).some((path) => path.endsWith(attachment.id))).toBe(false);
  });

  it('@discordjs/rest uploads a file with its own multipart body', async () => {
    const game = await addTestBot(hearth, room.guild);
    const rest = new REST({ api: `${hearth.url}/api`, version: '10' }).setToken(game.botToken);
    const png = solidPng(32, 0xff0000);
    const message = (await rest.post(Routes.channelMessages(room.channelId), {
      body: { content: 'from discord.js', attachments: [{ id: 0, description: 'red' }] },
      files: [{ name: 'red.png', data: png, contentType: 'image/png' }],
    })) as APIMessage;
    expect(message.content).toBe('from discord.js');
    expect(message.attachments).toEqual([
      expect.objectContaining({
        filename: 'red.png',
        description: 'red',
        size: png.length,
        width: 32,
        height: 32,
      }),
    ]);
    expect((await download(message.attachments[0]!.url)).bytes.equals(png)).toBe(true);

    const edited = (await rest.patch(Routes.channelMessage(room.channelId, message.id), {
      body: { attachments: [...message.attachments, { id: 0 }] },
      files: [{ name: 'notes.txt', data: Buffer.from('notes') }],
    })) as APIMessage;
    expect(edited.attachments.map((a) => a.filename)).toEqual(['red.png', 'notes.txt']);
  });
});

describe('the per-file upload limit: 10 MiB from 16 January 2025, 25 MiB before (seed: Limits)', () => {
  const servers: { hearth: TestHearth; dataDir: string }[] = [];
  afterEach(async () => {
    for (const { hearth, dataDir } of servers.splice(0)) {
      await hearth.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  async function serverAt(instant: string) {
    const dataDir = join(tmpdir(), `hearth-limit-${randomUUID()}`);
    const hearth = await startHearth({ rateLimitGlobal: 1_000_000, dataDir }, new ManualClock(instant));
    servers.push({ hearth, dataDir });
    const room = await createRoom(hearth);
    const upload = (size: number) =>
      call(hearth, `/channels/${room.channelId}/messages`, {
        method: 'POST',
        auth: room.member.token,
        body: form({ content: `${size} bytes` }, [{ filename: 'big.bin', bytes: new Uint8Array(size) }]),
      });
    return { hearth, dataDir, upload };
  }

  it('after 16 January 2025: 10 MiB passes, 10 MiB + 1 byte is 40005 and leaves no file on disk', async () => {
    const { dataDir, upload } = await serverAt(AFTER_LIMIT_CHANGE);
    const limit = Limits.fileUploadBytes;
    const atLimit = await upload(limit);
    expect(atLimit.status).toBe(200);
    expect(atLimit.body.attachments[0]!.size).toBe(limit);
    const stored = await filesUnder(dataDir);
    expect(stored).toHaveLength(1);

    const over = await upload(limit + 1);
    expect([over.status, over.body]).toEqual([413, TOO_LARGE]);
    expect(await filesUnder(dataDir)).toEqual(stored);
  });

  it('before 16 January 2025: 10 MiB + 1 byte is accepted', async () => {
    const { upload } = await serverAt(BEFORE_LIMIT_CHANGE);
    const accepted = await upload(Limits.fileUploadBytes + 1);
    expect(accepted.status).toBe(200);
    expect(accepted.body.attachments[0]).toMatchObject({ filename: 'big.bin', size: 10 * MiB + 1 });
    const served = await download(accepted.body.attachments[0]!.url);
    expect(served.bytes.length).toBe(10 * MiB + 1);
  });
});

const withPostgres = await postgresAvailable();

/** A file acknowledged with its message is there after a restart: the row, and the bytes at its url. */
async function fileSurvives(databaseUrl: string): Promise<void> {
  const dataDir = join(tmpdir(), `hearth-durable-${randomUUID()}`);
  const bytes = randomBytes(70_000);
  const first = await startHearth({ databaseUrl, dataDir, rateLimitGlobal: 1_000_000 });
  let path: string;
  let token: string;
  let sent: APIMessage;
  try {
    const room = await createRoom(first);
    token = room.member.token;
    path = `/channels/${room.channelId}/messages/`;
    const response = await call(first, path, {
      method: 'POST',
      auth: token,
      body: form({ attachments: [{ id: 0, description: 'kept', is_spoiler: true }] }, [
        { filename: 'k.bin', bytes },
      ]),
    });
    expect(response.status).toBe(200);
    sent = response.body;
  } finally {
    await first.close();
  }
  const second = await startHearth({ databaseUrl, dataDir, rateLimitGlobal: 1_000_000 });
  try {
    const read = await call(second, `${path}${sent.id}`, { auth: token });
    const [attachment] = read.body.attachments as [APIAttachment];
    const { url: _url, proxy_url: _proxy, ...rest } = sent.attachments[0]!;
    expect(attachment).toMatchObject({ ...rest, flags: AttachmentFlags.IsSpoiler, size: bytes.length });
    expect((await download(attachment.url)).bytes.equals(bytes)).toBe(true);
  } finally {
    await second.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

describe('an attachment survives a restart', () => {
  it('on SQLite', async () => {
    const directory = join(tmpdir(), `hearth-db-${randomUUID()}`);
    await mkdir(directory, { recursive: true });
    try {
      await fileSurvives(`sqlite:${join(directory, 'hearth.db')}`);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it.skipIf(!withPostgres)('on PostgreSQL', async () => {
    const schema = postgresSchema();
    try {
      await fileSurvives(schema.url);
    } finally {
      await schema.drop();
    }
  });
});

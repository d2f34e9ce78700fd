import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayOpcodes } from '@hearth/protocol';
import { verifyKey } from 'discord-interactions';
import { expect } from 'vitest';
import { type GatewayClient as Client, GatewayClient } from '../../../../test-support/gateway.js';
import {
  addTestMember,
  createTestGuild,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { consent, createGame, type TestGame } from '../../../../test-support/oauth.js';

/** Fixtures of the interaction suites: a guild, a member who invokes, a channel and an installed bot. */
export interface Scene {
  guild: TestGuild;
  member: { id: string; token: string };
  channelId: string;
  game: TestGame;
}

const PROPERTIES = { os: 'linux', browser: 'test', device: 'test' };
/** VIEW_CHANNEL | SEND_MESSAGES | EMBED_LINKS | ATTACH_FILES | READ_MESSAGE_HISTORY. */
export const BOT_PERMISSIONS = (1n << 10n) | (1n << 11n) | (1n << 14n) | (1n << 15n) | (1n << 16n);

export async function installedBot(hearth: TestHearth, guild: TestGuild, name: string): Promise<TestGame> {
  const game = await createGame(hearth, { name });
  const response = await consent(hearth, guild.owner.token, {
    client_id: game.id,
    scope: 'bot applications.commands',
    permissions: BOT_PERMISSIONS.toString(),
    guild_id: guild.id,
  });
  expect(response.status).toBe(200);
  return game;
}

export async function scene(hearth: TestHearth, name = 'Interactions'): Promise<Scene> {
  const guild = await createTestGuild(hearth, name);
  const member = await addTestMember(hearth, guild);
  const channelId = await seedTestChannel(hearth, guild.id, { name: 'general' });
  const game = await installedBot(hearth, guild, `${name} bot`);
  return { guild, member, channelId, game };
}

/** A gateway session identified with `token` (a user's session token or `Bot …`'s bare token). */
export async function connect(hearth: TestHearth, token: string, intents = 1): Promise<Client> {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: 2, d: { token, properties: PROPERTIES, intents } });
  await client.nextDispatch('READY');
  return client;
}

/** The bot posts a message with a button and a string select; answers the message id. */
export async function postComponents(hearth: TestHearth, s: Scene): Promise<string> {
  const response = await hearth.api(`/channels/${s.channelId}/messages`, {
    method: 'POST',
    auth: `Bot ${s.game.botToken}`,
    body: {
      content: 'Pick one',
      components: [
        { type: 1, components: [{ type: 2, style: 1, label: 'Go', custom_id: 'go' }] },
        {
          type: 1,
          components: [
            {
              type: 3,
              custom_id: 'flavour',
              options: [
                { label: 'Ash', value: 'ash' },
                { label: 'Oak', value: 'oak' },
              ],
            },
          ],
        },
      ],
    },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

/** The member clicks the button `custom_id` on `messageId` through the user-side route. */
export function click(hearth: TestHearth, s: Scene, messageId: string, customId = 'go', nonce?: string) {
  return hearth.api('/interactions', {
    method: 'POST',
    auth: s.member.token,
    body: {
      type: 3,
      application_id: s.game.id,
      guild_id: s.guild.id,
      channel_id: s.channelId,
      message_id: messageId,
      session_id: 'session',
      ...(nonce === undefined ? {} : { nonce }),
      data: { custom_id: customId, component_type: 2 },
    },
  });
}

/** One request an endpoint received, with whether discord-interactions' verifyKey accepted it. */
export interface Received {
  body: Record<string, unknown>;
  verified: boolean;
}

/**
 * An app's interactions endpoint checked by `discord-interactions` (`verifyKey`): 401 to a bad signature,
 * PONG to a PING, and `answer` otherwise (a status and a JSON body, or a 202 with none).
 */
export class Endpoint {
  readonly received: Received[] = [];
  answer: (body: Record<string, unknown>) => { status: number; body?: unknown } = () => ({ status: 202 });
  /** Whether it checks signatures at all (an endpoint that does not is refused when it is set). */
  checks = true;
  #server: Server;
  #waiters: (() => void)[] = [];

  private constructor(server: Server) {
    this.#server = server;
  }

  static async listen(publicKey: string): Promise<Endpoint> {
    const server = createServer();
    const endpoint = new Endpoint(server);
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks);
        const signature = String(request.headers['x-signature-ed25519'] ?? '');
        const timestamp = String(request.headers['x-signature-timestamp'] ?? '');
        void verifyKey(raw, signature, timestamp, publicKey).then((verified) => {
          const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
          endpoint.received.push({ body, verified });
          for (const wake of endpoint.#waiters.splice(0)) wake();
          const send = (status: number, json?: unknown) => {
            response.writeHead(status, json === undefined ? {} : { 'content-type': 'application/json' });
            response.end(json === undefined ? undefined : JSON.stringify(json));
          };
          if (endpoint.checks && !verified) send(401, { error: 'invalid request signature' });
          else if (body['type'] === 1) send(200, { type: 1 });
          else {
            const answer = endpoint.answer(body);
            send(answer.status, answer.body);
          }
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return endpoint;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/interactions`;
  }

  /** Resolves once `count` requests other than PINGs have arrived. */
  async interactions(count = 1): Promise<Received[]> {
    const of = () => this.received.filter((r) => r.body['type'] !== 1);
    while (of().length < count) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    return of();
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

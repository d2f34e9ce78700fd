import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestMember, createTestGuild, seedTestChannel } from '../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { approve, lobbyGame, lobbyPlayer } from '../../../test-support/lobbies.js';
import { provisionalPlayer } from '../../../test-support/provisional.js';
import { WebhookReceiver } from '../../../test-support/webhook-receiver.js';
import { installedBot } from './interactions/support.js';

/**
 * Issue 21, atomic requests: a request is validated whole before anything is written, and a refused one
 * leaves the resource as it was. Every PATCH route the server registers has a case here (the first test
 * fails when a new one has none); each case reads the resource, sends bodies that mix a valid change with
 * one the rules refuse, and reads it again.
 */

const UNKNOWN = '1234567890123456789';
const PNG_1X1 =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** PATCH routes whose credential only their own suite makes, with the test there that proves the rule. */
const PROVEN_ELSEWHERE: Record<string, string> = {
  // An interaction token exists only once a user has run a command and the bot has received it.
  'PATCH /webhooks/:application_id/:interaction_token/messages/:message_id':
    'interactions/responses.test.ts: a refused edit of the original response leaves it as it was',
};

interface Case {
  path: string;
  auth: string;
  /** The resource as its owner reads it. */
  read: () => Promise<unknown>;
  /** Each mixes a change that alone would succeed with one that is refused. */
  refused: unknown[];
}

let hearth: TestHearth;
let receiver: WebhookReceiver;
let cases: Record<string, Case>;

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  const game = await lobbyGame(hearth);
  await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['ProvisionalAccountsEnabled'] });
  await approve(hearth, game);
  const application = await hearth.services.applications.getApplication(game.id);
  receiver = await WebhookReceiver.listen(application?.verifyKey ?? '');
  const guild = await createTestGuild(hearth);
  const owner = guild.owner.token;
  const member = await addTestMember(hearth, guild);
  const other = await addTestMember(hearth, guild);
  const channel = await seedTestChannel(hearth, guild.id);
  const voice = await seedTestChannel(hearth, guild.id, { type: 2 });
  const player = await lobbyPlayer(hearth, game);
  const friend = await lobbyPlayer(hearth, game);
  const provisional = await provisionalPlayer(hearth, game, 'atomic-external');
  const otherName = (
    (await (await hearth.api('/users/@me', { auth: other.token })).json()) as { username: string }
  ).username;

  const call = async (path: string, method: string, auth: string, body?: unknown) => {
    const response = await hearth.api(path, { method, auth, ...(body === undefined ? {} : { body }) });
    expect(response.status, `${method} ${path}: ${await response.clone().text()}`).toBeLessThan(300);
    return (response.status === 204 ? { id: '' } : await response.json()) as { id: string };
  };
  const read = (path: string, auth: string) => async () => {
    const response = await hearth.api(path, { auth });
    return { status: response.status, body: await response.json() };
  };
  const role = await call(`/guilds/${guild.id}/roles`, 'POST', owner, { name: 'kept' });
  const lobby = await call('/lobbies', 'POST', game.bot, { metadata: { kept: 'yes' } });
  await call(`/lobbies/${lobby.id}/members/${player.id}`, 'PUT', game.bot, {});
  const linkable = await call('/lobbies', 'POST', game.bot, { members: [{ id: player.id, flags: 1 }] });
  const lobbyMessage = await call(`/lobbies/${lobby.id}/messages`, 'POST', player.bearer, {
    content: 'kept',
  });
  for (const [from, to] of [
    [player, friend],
    [friend, player],
  ] as const) {
    await call(`/users/@me/relationships/${to.id}`, 'PUT', from.bearer, {});
  }
  const dm = await call(`/users/${friend.id}/messages`, 'POST', player.bearer, { content: 'kept' });
  const message = await call(`/channels/${channel}/messages`, 'POST', owner, { content: 'kept' });
  // A group DM of three friends (its PATCH is PATCH /channels/{id} too, with the group DM fields).
  const third = await addTestMember(hearth, guild);
  for (const friendOf of [other, third]) {
    await call(`/users/@me/relationships/${friendOf.id}`, 'PUT', member.token, {});
    await call(`/users/@me/relationships/${member.id}`, 'PUT', friendOf.token, {});
  }
  const groupDm = await call('/users/@me/channels', 'POST', member.token, {
    recipients: [other.id, third.id],
  });
  await call(`/channels/${groupDm.id}`, 'PATCH', member.token, { name: 'kept' });
  const rule = await call(`/guilds/${guild.id}/auto-moderation/rules`, 'POST', owner, {
    name: 'kept',
    event_type: 1,
    trigger_type: 1,
    trigger_metadata: { keyword_filter: ['kept'] },
    actions: [{ type: 1 }],
  });

  const commander = await installedBot(hearth, guild, 'Atomic commands');
  const bot = `Bot ${commander.botToken}`;
  const command = { name: 'kept', description: 'kept' };
  const globalCommand = await call(`/applications/${commander.id}/commands`, 'POST', bot, command);
  const guildCommands = `/applications/${commander.id}/guilds/${guild.id}/commands`;
  const guildCommand = await call(guildCommands, 'POST', bot, command);
  const emoji = await call(`/applications/${commander.id}/emojis`, 'POST', bot, {
    name: 'kept',
    image: PNG_1X1,
  });
  const commandRefusals = [
    { description: 'Changed', name: 'Not A Name!' },
    { description: 'Changed', options: [{ type: 99, name: 'x', description: 'x' }] },
  ];

  cases = {
    'PATCH /applications/:application_id': {
      path: `/applications/${commander.id}`,
      auth: bot,
      read: read(`/applications/${commander.id}`, bot),
      refused: [
        { description: 'Changed', tags: ['a', 'b', 'c', 'd', 'e', 'f'] },
        {
          description: 'Changed',
          integration_types_config: { '1': { oauth2_install_params: { scopes: ['bot'] } } },
        },
      ],
    },
    'PATCH /applications/:application_id/emojis/:emoji_id': {
      path: `/applications/${commander.id}/emojis/${emoji.id}`,
      auth: bot,
      read: read(`/applications/${commander.id}/emojis/${emoji.id}`, bot),
      refused: [{ name: 'a' }, { name: 'not a name' }],
    },
    'PATCH /applications/:application_id/commands/:command_id': {
      path: `/applications/${commander.id}/commands/${globalCommand.id}`,
      auth: bot,
      read: read(`/applications/${commander.id}/commands/${globalCommand.id}`, bot),
      refused: commandRefusals,
    },
    'PATCH /applications/:application_id/guilds/:guild_id/commands/:command_id': {
      path: `${guildCommands}/${guildCommand.id}`,
      auth: bot,
      read: read(`${guildCommands}/${guildCommand.id}`, bot),
      refused: commandRefusals,
    },
    'PATCH /users/@me': {
      path: '/users/@me',
      auth: owner,
      read: read('/users/@me', owner),
      refused: [
        { global_name: 'Changed', username: otherName },
        { global_name: 'Changed', avatar: 'data:image/png;base64,AAAA' },
      ],
    },
    'PATCH /applications/@me': {
      path: '/applications/@me',
      auth: game.bot,
      read: read('/applications/@me', game.bot),
      refused: [
        // The partial write of issue 21: the URL was saved although the request answered 400.
        { event_webhooks_url: receiver.url, flags: 1 },
        { description: 'Changed', event_webhooks_url: `${receiver.url}/nothing`, event_webhooks_status: 3 },
        { description: 'Changed', tags: ['a'], flags: 1 },
      ],
    },
    'PATCH /guilds/:guild_id': {
      path: `/guilds/${guild.id}`,
      auth: owner,
      read: read(`/guilds/${guild.id}`, owner),
      refused: [
        { name: 'Changed', afk_channel_id: UNKNOWN },
        { name: 'Changed', system_channel_id: voice },
        { name: 'Changed', icon: 'data:image/png;base64,AAAA' },
      ],
    },
    'PATCH /guilds/:guild_id/roles': {
      path: `/guilds/${guild.id}/roles`,
      auth: owner,
      read: read(`/guilds/${guild.id}/roles`, owner),
      refused: [
        [
          { id: role.id, position: 5 },
          { id: UNKNOWN, position: 1 },
        ],
      ],
    },
    'PATCH /guilds/:guild_id/roles/:role_id': {
      path: `/guilds/${guild.id}/roles/${role.id}`,
      auth: owner,
      read: read(`/guilds/${guild.id}/roles/${role.id}`, owner),
      refused: [
        { name: 'Changed', icon: PNG_1X1 },
        { name: 'Changed', unicode_emoji: '🔥', icon: PNG_1X1 },
      ],
    },
    'PATCH /guilds/:guild_id/members/@me': {
      path: `/guilds/${guild.id}/members/@me`,
      auth: member.token,
      read: read(`/guilds/${guild.id}/members/${member.id}`, owner),
      refused: [
        { nick: 'Changed', avatar: 'data:image/png;base64,AAAA' },
        { nick: 'Changed', bio: 'x'.repeat(10_000) },
      ],
    },
    'PATCH /guilds/:guild_id/members/:user_id': {
      path: `/guilds/${guild.id}/members/${member.id}`,
      auth: owner,
      read: read(`/guilds/${guild.id}/members/${member.id}`, owner),
      refused: [
        { nick: 'Changed', roles: [role.id, UNKNOWN] },
        { nick: 'Changed', roles: [role.id], channel_id: voice },
        { nick: 'Changed', mute: true },
        { nick: 'Changed', communication_disabled_until: '2999-01-01T00:00:00.000Z' },
      ],
    },
    'PATCH /guilds/:guild_id/voice-states/@me': {
      path: `/guilds/${guild.id}/voice-states/@me`,
      auth: member.token,
      read: read(`/guilds/${guild.id}/voice-states/${member.id}`, owner),
      refused: [
        { channel_id: voice, suppress: true },
        { channel_id: channel, request_to_speak_timestamp: null },
      ],
    },
    'PATCH /guilds/:guild_id/voice-states/:user_id': {
      path: `/guilds/${guild.id}/voice-states/${member.id}`,
      auth: owner,
      read: read(`/guilds/${guild.id}/voice-states/${member.id}`, owner),
      refused: [{ channel_id: voice, suppress: true }],
    },
    'PATCH /guilds/:guild_id/channels': {
      path: `/guilds/${guild.id}/channels`,
      auth: owner,
      read: read(`/guilds/${guild.id}/channels`, owner),
      refused: [
        [
          { id: channel, position: 7 },
          { id: UNKNOWN, position: 1 },
        ],
        [
          { id: channel, position: 7 },
          { id: voice, parent_id: channel },
        ],
      ],
    },
    'PATCH /channels/:channel_id': {
      path: `/channels/${channel}`,
      auth: owner,
      read: read(`/channels/${channel}`, owner),
      refused: [
        { name: 'changed', parent_id: UNKNOWN },
        { name: 'changed', parent_id: voice },
        {
          name: 'changed',
          topic: 'changed',
          permission_overwrites: [{ id: UNKNOWN, type: 0, allow: '0', deny: '0' }],
        },
      ],
    },
    'PATCH /channels/:channel_id (group DM)': {
      path: `/channels/${groupDm.id}`,
      auth: other.token,
      read: read(`/channels/${groupDm.id}`, member.token),
      refused: [
        { name: 'changed', icon: 'data:image/png;base64,AAAA' },
        { name: 'changed', icon: 7 },
        { icon: PNG_1X1, name: 'x'.repeat(101) },
      ],
    },
    'PATCH /lobbies/:lobby_id': {
      path: `/lobbies/${lobby.id}`,
      auth: game.bot,
      read: read(`/lobbies/${lobby.id}`, game.bot),
      refused: [
        { metadata: { kept: 'no' }, members: [{ id: player.id }, { id: UNKNOWN }] },
        { metadata: { kept: 'no' }, idle_timeout_seconds: 1 },
      ],
    },
    'PATCH /lobbies/:lobby_id/channel-linking': {
      path: `/lobbies/${linkable.id}/channel-linking`,
      auth: player.bearer,
      read: read(`/lobbies/${linkable.id}`, game.bot),
      refused: [{ channel_id: voice }, { channel_id: 'not a snowflake' }, { channel_id: UNKNOWN }],
    },
    'PATCH /lobbies/:lobby_id/messages/:message_id': {
      path: `/lobbies/${lobby.id}/messages/${lobbyMessage.id}`,
      auth: player.bearer,
      read: read(`/lobbies/${lobby.id}/messages`, player.bearer),
      refused: [{ content: 'x'.repeat(5000) }, { content: 5 }],
    },
    'PATCH /users/@me/account': {
      path: '/users/@me/account',
      auth: provisional.bearer,
      read: read('/users/@me', provisional.bearer),
      refused: [{ global_name: 5 }, { global_name: 'x'.repeat(100) }],
    },
    'PATCH /applications/:application_id/identity-providers/:provider_id': {
      path: `/applications/${game.id}/identity-providers/${UNKNOWN}`,
      auth: game.bot,
      read: read(`/applications/${game.id}/identity-providers`, game.bot),
      refused: [{ name: 'Changed' }, { name: 'Changed', issuer: 'not a url' }],
    },
    'PATCH /users/:user_id/messages/:message_id': {
      path: `/users/${friend.id}/messages/${dm.id}`,
      auth: player.bearer,
      read: read(`/users/${friend.id}/messages`, player.bearer),
      refused: [
        { content: 'changed', metadata: { a: 'x'.repeat(10_000) } },
        { content: 'changed', metadata: 'not an object' },
      ],
    },
    'PATCH /channels/:channel_id/messages/:message_id': {
      path: `/channels/${channel}/messages/${message.id}`,
      auth: owner,
      read: read(`/channels/${channel}/messages/${message.id}`, owner),
      refused: [
        { content: 'changed', embeds: [{ title: 'x'.repeat(257) }] },
        { content: 'changed', allowed_mentions: { parse: ['users'], users: [UNKNOWN] } },
        { content: 'changed', components: [{ type: 2, style: 1, custom_id: 'top-level-button' }] },
      ],
    },
    'PATCH /guilds/:guild_id/auto-moderation/rules/:rule_id': {
      path: `/guilds/${guild.id}/auto-moderation/rules/${rule.id}`,
      auth: owner,
      read: read(`/guilds/${guild.id}/auto-moderation/rules/${rule.id}`, owner),
      refused: [
        { name: 'changed', trigger_metadata: { keyword_filter: ['x'.repeat(61)] } },
        { name: 'changed', exempt_roles: [UNKNOWN] },
        { name: 'changed', actions: [{ type: 2, metadata: { channel_id: UNKNOWN } }] },
      ],
    },
  };
});

afterAll(async () => {
  await receiver?.close();
  await hearth?.close();
});

describe('a refused request leaves the resource unchanged (issue 21, atomic requests)', () => {
  it('has a case for every PATCH route the server registers', () => {
    const patches = hearth.routes
      .filter((route) => route.method === 'PATCH' && route.url.startsWith('/api/v10/'))
      .map((route) => `PATCH ${route.url.replace('/api/v10', '')}`);
    expect(patches.length).toBeGreaterThan(10);
    expect(patches.filter((route) => !(route in cases) && !(route in PROVEN_ELSEWHERE))).toEqual([]);
  });

  it.each([
    'PATCH /users/@me',
    'PATCH /applications/@me',
    'PATCH /guilds/:guild_id',
    'PATCH /guilds/:guild_id/roles',
    'PATCH /guilds/:guild_id/roles/:role_id',
    'PATCH /guilds/:guild_id/members/@me',
    'PATCH /guilds/:guild_id/members/:user_id',
    'PATCH /guilds/:guild_id/voice-states/@me',
    'PATCH /guilds/:guild_id/voice-states/:user_id',
    'PATCH /guilds/:guild_id/channels',
    'PATCH /channels/:channel_id',
    'PATCH /channels/:channel_id (group DM)',
    'PATCH /lobbies/:lobby_id',
    'PATCH /lobbies/:lobby_id/channel-linking',
    'PATCH /lobbies/:lobby_id/messages/:message_id',
    'PATCH /users/@me/account',
    'PATCH /applications/:application_id/identity-providers/:provider_id',
    'PATCH /users/:user_id/messages/:message_id',
    'PATCH /channels/:channel_id/messages/:message_id',
    'PATCH /guilds/:guild_id/auto-moderation/rules/:rule_id',
    'PATCH /applications/:application_id',
    'PATCH /applications/:application_id/emojis/:emoji_id',
    'PATCH /applications/:application_id/commands/:command_id',
    'PATCH /applications/:application_id/guilds/:guild_id/commands/:command_id',
  ])('%s', async (name) => {
    const { path, auth, read, refused } = cases[name] as Case;
    const before = await read();
    for (const body of refused) {
      const response = await hearth.api(path, { method: 'PATCH', auth, body });
      const text = await response.text();
      expect(response.status, `${JSON.stringify(body).slice(0, 120)}: ${text}`).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(await read(), `after ${JSON.stringify(body).slice(0, 120)}: ${text}`).toEqual(before);
    }
  });
});

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RpcCloseCodes, RpcIpcOpcodes, RpcLimits } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import type { TestGame } from '../../../../test-support/oauth.js';
import type { RpcAgent } from '../../src/rpc/agent.js';
import { ipcDirectory, ipcPath } from '../../src/rpc/ipc.js';
import { agentUser, ipcDir, RawIpcClient, rpcGame, startAgent } from './rpc-support.js';

/** The IPC transport (PROTOCOL.md §H): slots, stale sockets, framing, handshake, READY, PING/PONG. */
describe('RPC over IPC', () => {
  let hearth: TestHearth;
  let game: TestGame;
  let user: Awaited<ReturnType<typeof agentUser>>;
  let dir: ReturnType<typeof ipcDir>;
  let agent: RpcAgent;

  beforeAll(async () => {
    hearth = await startHearth();
    game = await rpcGame(hearth);
    user = await agentUser(hearth);
    dir = ipcDir();
    agent = await startAgent(hearth, user.token, { ipc: { directory: dir.path }, websocket: false });
  });
  afterAll(async () => {
    await agent?.close();
    await hearth?.close();
    dir?.remove();
  });

  it('finds the directory as clients do: the first variable set and not empty, else /tmp; pipes on Windows', () => {
    expect(ipcDirectory({ XDG_RUNTIME_DIR: '/run/user/1000', TMPDIR: '/var/tmp' })).toBe('/run/user/1000');
    expect(ipcDirectory({ XDG_RUNTIME_DIR: '', TMPDIR: '/var/tmp/' })).toBe('/var/tmp');
    expect(ipcDirectory({ TMP: '/t1', TEMP: '/t2' })).toBe('/t1');
    expect(ipcDirectory({ TEMP: '/t2' })).toBe('/t2');
    expect(ipcDirectory({})).toBe('/tmp');
    expect(ipcPath('/run/user/1000', 3, 'linux')).toBe('/run/user/1000/discord-ipc-3');
    expect(ipcPath('C:\\Temp', 3, 'win32')).toBe('\\\\?\\pipe\\discord-ipc-3');
  });

  it('listens on discord-ipc-0 of the directory it was given', () => {
    expect(agent.ipcPath).toBe(join(dir.path, 'discord-ipc-0'));
    expect(existsSync(join(dir.path, 'discord-ipc-0'))).toBe(true);
  });

  it('answers the handshake {v: 1, client_id} with READY: v, config with the endpoints, the user', async () => {
    const client = await RawIpcClient.connect(agent.ipcPath!);
    client.handshake(game.id);
    const ready = await client.next();
    expect(ready.op).toBe(RpcIpcOpcodes.Frame);
    const host = new URL(hearth.url).host;
    expect(ready.data).toEqual({
      cmd: 'DISPATCH',
      evt: 'READY',
      nonce: null,
      data: {
        v: 1,
        config: { cdn_host: host, api_endpoint: `//${host}/api`, environment: 'production' },
        user: expect.objectContaining({ id: user.id, username: user.username }),
      },
    });
    client.close();
  });

  it('echoes a PING as a PONG with the same data', async () => {
    const client = await RawIpcClient.connect(agent.ipcPath!);
    client.handshake(game.id);
    await client.next();
    client.send(RpcIpcOpcodes.Ping, JSON.stringify('a5f1-uuid'));
    expect(await client.next()).toEqual({ op: RpcIpcOpcodes.Pong, data: 'a5f1-uuid' });
    client.close();
  });

  it('closes with 4000 for a client id no application has, 4004 for another version', async () => {
    const unknown = await RawIpcClient.connect(agent.ipcPath!);
    unknown.handshake('123456789012345678');
    expect(await unknown.next()).toEqual({
      op: RpcIpcOpcodes.Close,
      data: { code: RpcCloseCodes.InvalidClientId, message: 'Invalid Client ID' },
    });
    await unknown.ended;

    const missing = await RawIpcClient.connect(agent.ipcPath!);
    missing.send(RpcIpcOpcodes.Handshake, { v: 1 });
    expect((await missing.next()).data).toEqual({ code: 4000, message: 'Invalid Client ID' });

    const version = await RawIpcClient.connect(agent.ipcPath!);
    version.send(RpcIpcOpcodes.Handshake, { v: 2, client_id: game.id });
    expect((await version.next()).data).toEqual({
      code: RpcCloseCodes.InvalidVersion,
      message: 'Invalid Version',
    });
  });

  describe('a bad frame closes that connection with 1003, and the agent serves the others', () => {
    async function open(): Promise<RawIpcClient> {
      const client = await RawIpcClient.connect(agent.ipcPath!);
      client.handshake(game.id);
      await client.next();
      return client;
    }

    async function stillServes(bystander: RawIpcClient): Promise<void> {
      const reply = await bystander.command('GET_VOICE_SETTINGS_NOT_A_COMMAND', {});
      expect((reply.data as { evt: string }).evt).toBe('ERROR');
      const fresh = await open();
      fresh.close();
    }

    it('a length over the limit', async () => {
      const bystander = await open();
      const client = await open();
      client.sendRaw(RpcIpcOpcodes.Frame, Buffer.alloc(16), RpcLimits.frameMaxBytes + 1);
      expect(await client.next()).toEqual({
        op: RpcIpcOpcodes.Close,
        data: {
          code: RpcCloseCodes.Unsupported,
          message: `Frame of ${RpcLimits.frameMaxBytes + 1} bytes exceeds ${RpcLimits.frameMaxBytes}`,
        },
      });
      await client.ended;
      await stillServes(bystander);
      bystander.close();
    });

    it('a frame of exactly the limit is read', async () => {
      const client = await open();
      const padding = 'x'.repeat(RpcLimits.frameMaxBytes - 60);
      const body = Buffer.from(JSON.stringify({ cmd: 'NOPE', nonce: 'n1', args: { padding } }));
      const exact = Buffer.concat([body, Buffer.alloc(RpcLimits.frameMaxBytes - body.length, ' ')]);
      expect(exact.length).toBe(RpcLimits.frameMaxBytes);
      client.sendRaw(RpcIpcOpcodes.Frame, exact);
      expect((await client.next()).data).toMatchObject({
        cmd: 'NOPE',
        nonce: 'n1',
        evt: 'ERROR',
        data: { code: 4002 },
      });
      client.close();
    });

    it('invalid JSON', async () => {
      const bystander = await open();
      const client = await open();
      client.send(RpcIpcOpcodes.Frame, '{"cmd": "SET_ACTIVITY", ');
      expect(await client.next()).toEqual({
        op: RpcIpcOpcodes.Close,
        data: { code: RpcCloseCodes.Unsupported, message: 'Payload is not valid JSON' },
      });
      await client.ended;
      await stillServes(bystander);
      bystander.close();
    });

    it('an unknown opcode', async () => {
      const bystander = await open();
      const client = await open();
      client.send(7, { hello: true });
      expect(await client.next()).toEqual({
        op: RpcIpcOpcodes.Close,
        data: { code: RpcCloseCodes.Unsupported, message: 'Unknown opcode 7' },
      });
      await client.ended;
      await stillServes(bystander);
      bystander.close();
    });

    it('a FRAME before the handshake', async () => {
      const client = await RawIpcClient.connect(agent.ipcPath!);
      client.send(RpcIpcOpcodes.Frame, { cmd: 'GET_GUILDS', nonce: 'x' });
      expect((await client.next()).data).toEqual({
        code: RpcCloseCodes.Unsupported,
        message: 'Handshake first',
      });
    });

    it('frames cut at any byte are read whole', async () => {
      const client = await RawIpcClient.connect(agent.ipcPath!);
      const body = Buffer.from(JSON.stringify({ v: 1, client_id: game.id }));
      const header = Buffer.alloc(8);
      header.writeUInt32LE(RpcIpcOpcodes.Handshake, 0);
      header.writeUInt32LE(body.length, 4);
      const whole = Buffer.concat([header, body]);
      for (const byte of whole) client.socket.write(Buffer.from([byte]));
      expect((await client.next()).data).toMatchObject({ evt: 'READY' });
      client.close();
    });
  });

  it('a second agent on the machine takes discord-ipc-1 while the first holds discord-ipc-0', async () => {
    const other = await agentUser(hearth);
    const second = await startAgent(hearth, other.token, { ipc: { directory: dir.path }, websocket: false });
    try {
      expect(second.ipcPath).toBe(join(dir.path, 'discord-ipc-1'));
      const client = await RawIpcClient.connect(second.ipcPath!);
      client.handshake(game.id);
      expect((await client.next()).data).toMatchObject({ evt: 'READY' });
      client.close();
    } finally {
      await second.close();
    }
    expect(existsSync(join(dir.path, 'discord-ipc-1'))).toBe(false);
  });
});

import { readFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { AuthorizationTokenType, sdkpp } from '@hearth/sdk';
import { build } from 'esbuild';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from '../../../../test-support/browser.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../../test-support/oauth.js';
import { startVoiceHearth } from '../../../../test-support/voice.js';
import { until } from '../../../../test-support/wait.js';
import type * as BrowserSdk from '../../../sdk/src/browser.js';
import { rms, sineFrame } from '../../../sdk/test/voice/signal.js';
import { ManualClock } from '../../src/kernel/clock.js';

/**
 * A lobby call between the library in a real browser and the library on Node (seed:
 * StartCallWithAudioCallbacks; issue 18): the browser reaches the voice node over a WebRTC data channel
 * (op 1 `webrtc_datachannel`), the Node client over UDP, and the forwarder relays between the two. Each
 * side counts the frames its received-audio callback gets and checks their energy against what the other
 * sent. After 1 March 2026, so the call is end-to-end encrypted: the browser's DAVE is the plain TypeScript
 * one on ts-mls, Node's is @snazzah/davey (openmls), and the forwarder only ever sees DAVE frames.
 */

const available = await chromiumAvailable();
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const { Status } = sdkpp.Client;
const CallStatus = sdkpp.Call.Status;
const SCOPES = 'openid sdk.social_layer';
const PEAK = 8000;
const FRAMES = 30;
const PAGE_PATH = '/voice-test/';

/** The browser entry, bundled as a game's web build would bundle it, with the test signals. */
async function bundleSdk(): Promise<string> {
  const result = await build({
    absWorkingDir: ROOT,
    stdin: {
      contents:
        "export * from './packages/sdk/src/browser.ts';\nexport { rms, sineFrame } from './packages/sdk/test/voice/signal.ts';",
      resolveDir: ROOT,
      loader: 'ts',
    },
    platform: 'browser',
    format: 'esm',
    bundle: true,
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

/**
 * The game's web origin on loopback: the page, its script and the codec, and every other request passed on
 * to Hearth (whose API answers no CORS, so a web build reaches it from its own origin through such a proxy).
 */
async function startGameOrigin(
  hearthUrl: string,
  files: Record<string, { type: string; body: string | Buffer }>,
) {
  const upstream = new URL(hearthUrl);
  const server: Server = createServer((request, response) => {
    const file = files[new URL(request.url ?? '/', 'http://127.0.0.1').pathname];
    if (file) {
      response.writeHead(200, { 'content-type': file.type }).end(file.body);
      return;
    }
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, host: upstream.host },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => response.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What the page keeps between evaluations. */
interface PageState {
  sdk: typeof BrowserSdk & { rms: typeof rms; sineFrame: typeof sineFrame };
  client: BrowserSdk.sdkpp.Client;
  call: BrowserSdk.sdkpp.Call | undefined;
  /** RMS of each frame the received callback got, by sender. */
  heard: Record<string, number[]>;
  captured: number;
  source: BrowserSdk.sdkpp.PushAudioSource;
  errors: string[];
  peers: { connectionState: string }[];
}

describe.skipIf(!available)(
  'a lobby call between a browser’s Client (data channel) and a Node Client (UDP)',
  () => {
    let hearth: TestHearth;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let game: TestGame;
    let nodeClient: sdkpp.Client;
    let origin: Awaited<ReturnType<typeof startGameOrigin>>;
    const clock = new ManualClock('2026-03-02T00:00:00Z');
    const nodeHeard = new Map<bigint, Int16Array[]>();
    let nodeCaptured = 0;

    beforeAll(async () => {
      const wasmPath = createRequire(import.meta.url).resolve('opusscript/build/opusscript_native_wasm.wasm');
      const [started, launched, script, wasm] = await Promise.all([
        startVoiceHearth(clock),
        launchChromium(),
        bundleSdk(),
        readFile(wasmPath),
      ]);
      hearth = started;
      browser = launched;
      game = await createGame(hearth, { publicClient: true });
      origin = await startGameOrigin(hearth.url, {
        [PAGE_PATH]: {
          type: 'text/html',
          // Every peer connection the page makes is kept, to show the media went over WebRTC.
          body: `<!doctype html><script type="module">
          const peers = [];
          const Native = globalThis.RTCPeerConnection;
          globalThis.RTCPeerConnection = class extends Native {
            constructor(config) { super(config); peers.push(this); }
          };
          const sdk = await import("./sdk.js");
          globalThis.state = { sdk, peers };
        </script>`,
        },
        [`${PAGE_PATH}sdk.js`]: { type: 'text/javascript', body: script },
        // Where browserVoiceNetwork looks for the codec by default: beside the page.
        [`${PAGE_PATH}opusscript_native_wasm.wasm`]: { type: 'application/wasm', body: wasm },
      });
      // The voice gateway's certificate is the tests' own: the browser context trusts it as the workers do.
      context = await browser.newContext({ ignoreHTTPSErrors: true });
      page = await context.newPage();
      page.on('console', (message) => {
        if (message.type() === 'error') console.warn(`browser: ${message.text()}`);
      });
      await page.goto(`${origin.url}${PAGE_PATH}`);
      await page.waitForFunction(() => (globalThis as { state?: unknown }).state !== undefined);
    }, 90_000); // a server, a browser and a bundle start slowly on a loaded machine

    afterAll(async () => {
      nodeClient?.EndCalls();
      nodeClient?.Disconnect();
      await context?.close();
      await Promise.all([browser?.close(), origin?.close()]);
      await hearth?.close();
    });

    async function tokenFor(): Promise<{ id: string; token: string }> {
      const account = await createPlayer(hearth);
      const tokens = await grantTokens(hearth, game, account.token, SCOPES);
      return { id: account.user.id, token: tokens.access_token };
    }

    it('both join the call and are Connected; each hears the other’s sine frame for frame', async () => {
      const alice = await tokenFor();
      const bob = await tokenFor();
      nodeClient = new sdkpp.Client(`${hearth.url}/api`, hearth.url);
      await nodeClient.UpdateToken(AuthorizationTokenType.Bearer, alice.token);
      nodeClient.Connect();
      await until(() => nodeClient.GetStatus() === Status.Ready, 'the Node client Ready');
      const lobby = await nodeClient.CreateOrJoinLobby('browser-table');
      expect(lobby.result.Successful()).toBe(true);

      // The browser player: Ready, in the lobby, then its call (the default browser voice network).
      const browserLobby = await page.evaluate(
        async ({ api, web, token }) => {
          const state = (globalThis as unknown as { state: PageState }).state;
          const { sdkpp: lib, AuthorizationTokenType: TokenType } = state.sdk;
          state.errors = [];
          state.heard = {};
          state.captured = 0;
          state.client = new lib.Client(api, web);
          state.client.AddLogCallback((message) => state.errors.push(message), lib.LoggingSeverity.Error);
          await state.client.UpdateToken(TokenType.Bearer, token);
          state.client.Connect();
          while (state.client.GetStatus() !== lib.Client.Status.Ready) {
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
          const joined = await state.client.CreateOrJoinLobby('browser-table');
          if (!joined.result.Successful()) throw new Error(joined.result.ToString());
          state.source = new lib.PushAudioSource();
          state.call = state.client.StartCallWithAudioCallbacks(
            joined.lobbyId,
            (userId, data, samplesPerChannel, sampleRate, channels) => {
              if (samplesPerChannel !== 960 || sampleRate !== 48_000 || channels !== 2) {
                state.errors.push(`frame shape ${samplesPerChannel} ${sampleRate} ${channels}`);
              }
              const sender = String(userId);
              state.heard[sender] = [...(state.heard[sender] ?? []), state.sdk.rms(data)];
            },
            () => {
              state.captured += 1;
            },
          );
          state.call?.SetAudioSource(state.source);
          return String(joined.lobbyId);
        },
        { api: `${origin.url}/api`, web: origin.url, token: bob.token },
      );
      expect(browserLobby).toBe(String(lobby.lobbyId));

      const nodeSource = new sdkpp.PushAudioSource();
      const nodeCall = nodeClient.StartCallWithAudioCallbacks(
        lobby.lobbyId,
        (userId, data, samplesPerChannel, sampleRate, channels) => {
          expect([samplesPerChannel, sampleRate, channels]).toEqual([960, 48_000, 2]);
          nodeHeard.set(userId, [...(nodeHeard.get(userId) ?? []), data.slice()]);
        },
        () => {
          nodeCaptured += 1;
        },
      );
      if (!nodeCall) throw new Error('StartCall answered no call');
      nodeCall.SetAudioSource(nodeSource);

      const browserStatus = () =>
        page.evaluate(() => {
          const { call } = (globalThis as unknown as { state: PageState }).state;
          return { status: call?.GetStatus(), participants: call?.GetParticipants().map(String).sort() };
        });
      await until(() => nodeCall.GetStatus() === CallStatus.Connected, 'the Node call Connected');
      await page.waitForFunction(
        (connected) => (globalThis as unknown as { state: PageState }).state.call?.GetStatus() === connected,
        CallStatus.Connected,
        { timeout: 20_000 },
      );
      await until(() => nodeCall.GetParticipants().length === 2, 'both participants at the Node client');
      await page.waitForFunction(
        () => (globalThis as unknown as { state: PageState }).state.call?.GetParticipants().length === 2,
      );
      expect(await browserStatus()).toEqual({
        status: CallStatus.Connected,
        participants: [alice.id, bob.id].sort(),
      });
      // One DAVE group across the two implementations before anyone speaks.
      await until(() => nodeCall.connection?.e2ee === true, 'DAVE at the Node client');
      await page.waitForFunction(
        () => (globalThis as unknown as { state: PageState }).state.call?.connection?.e2ee === true,
        undefined,
        { timeout: 20_000 },
      );

      // Both speak at once: the browser paces its frames in the page, Node in the test.
      const browserSpeaks = page.evaluate(
        async ({ frames, peak }) => {
          const state = (globalThis as unknown as { state: PageState }).state;
          for (let i = 0; i < frames; i++) {
            state.source.push(state.sdk.sineFrame(i, peak));
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
        },
        { frames: FRAMES, peak: PEAK / 2 },
      );
      for (let i = 0; i < FRAMES; i++) {
        nodeSource.push(sineFrame(i, PEAK));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await browserSpeaks;

      await until(() => nodeHeard.get(BigInt(bob.id))?.length === FRAMES, 'the browser’s frames at Node');
      await page.waitForFunction(
        ({ sender, frames }) =>
          (globalThis as unknown as { state: PageState }).state.heard[sender]?.length === frames,
        { sender: alice.id, frames: FRAMES },
        { timeout: 15_000 },
      );
      const atBrowser = await page.evaluate(() => {
        const { heard, captured, errors, peers } = (globalThis as unknown as { state: PageState }).state;
        return { heard, captured, errors, peers: peers.map((peer) => peer.connectionState) };
      });
      // Steady state after Opus' first frames: the decoded energy is the sent energy within 10 %.
      const steady = (levels: number[]) =>
        levels.slice(5).reduce((sum, level) => sum + level, 0) / (levels.length - 5);
      const sent = rms(sineFrame(0, PEAK));
      const fromBrowser = steady((nodeHeard.get(BigInt(bob.id)) ?? []).map(rms));
      const fromNode = steady(atBrowser.heard[alice.id] ?? []);
      expect(Math.abs(fromBrowser - sent / 2) / (sent / 2)).toBeLessThan(0.1);
      expect(Math.abs(fromNode - sent) / sent).toBeLessThan(0.1);
      expect(Object.keys(atBrowser.heard)).toEqual([alice.id]);
      expect([...nodeHeard.keys()]).toEqual([BigInt(bob.id)]);
      expect(atBrowser.captured).toBe(FRAMES);
      expect(nodeCaptured).toBe(FRAMES);
      expect(atBrowser.errors).toEqual([]);
      // The browser's datagrams went over its one peer connection (the data channel), not a socket.
      expect(atBrowser.peers).toEqual(['connected']);
      // Every datagram crossed the one forwarder: nothing it received failed authentication, and no audio
      // frame it relayed was plaintext (each ended with DAVE's 0xFAFA marker; silence frames aside).
      expect(hearth.voice.mediaStats.decryptFailures).toBe(0);
      expect(hearth.voice.mediaStats.plainFrames).toBe(0);
      expect(hearth.voice.mediaStats.daveFrames).toBeGreaterThanOrEqual(2 * FRAMES);
    });

    it('the browser player ends the call: the Node client sees them leave', async () => {
      const nodeCall = nodeClient.GetCalls()[0]!;
      await page.evaluate(() => {
        const state = (globalThis as unknown as { state: PageState }).state;
        state.client.EndCalls();
      });
      await until(() => nodeCall.GetParticipants().length === 1, 'the browser player leaving');
      expect(
        await page.evaluate(
          () => (globalThis as unknown as { state: PageState }).state.client.GetCalls().length,
        ),
      ).toBe(0);
    });
  },
);

import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { ClientCore, type ClientOptions, withDefaults } from './client.js';
import type { WebSocketConstructor } from './gateway/socket.js';
import { launchJoinFromEnvironment, nodeLaunchCommandStore } from './launch/node-launch-commands.js';
import { customSchemeReceiver, type RedirectReceiver, type RedirectStrategy } from './redirect.js';
import { nodeVoiceNetwork } from './voice/node-voice.js';

/** SetVoiceLogDir on Node: lines appended to `voice.log` in the directory, created when missing. */
function voiceLogWriter(dir: string): (line: string) => void {
  const file = join(dir, 'voice.log');
  return (line) => {
    try {
      mkdirSync(dir, { recursive: true });
      appendFileSync(file, `${line}\n`);
    } catch {
      // A log file that cannot be written must not break the call that logs.
    }
  };
}

const CALLBACK_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signed in</title></head>
<body style="font-family:system-ui,sans-serif;text-align:center;margin-top:20vh"><h1>You are signed in</h1>
<p>You can close this window and return to the game.</p></body></html>`;

/**
 * Desktop redirect: a one-shot listener on 127.0.0.1 and a random port, `http://127.0.0.1:<port>/callback`
 * (RFC 8252 §7.3; the platform ignores the port of loopback redirects). A custom scheme, when set, wins.
 */
export const loopbackRedirect: RedirectStrategy = async (context) => {
  if (context.customSchemeParam !== undefined) return customSchemeReceiver(context);
  let deliver: (url: URL) => void = () => undefined;
  const arrived = new Promise<URL>((resolve) => {
    deliver = resolve;
  });
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (request.method !== 'GET' || url.pathname !== '/callback') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    response.end(CALLBACK_PAGE);
    deliver(new URL(`${redirectUri}${url.search}`));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  const redirectUri = `http://127.0.0.1:${port}/callback`;
  const receiver: RedirectReceiver = {
    redirectUri,
    wait: () => arrived,
    offer: () => false,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
};

/** Opens the system browser; where none can be started, prints the URL for the player to open. */
export function systemOpener(url: string): Promise<void> {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url.replace(/&/g, '^&')]]
        : ['xdg-open', [url]];
  return new Promise((resolve) => {
    let printed = false;
    const printInstead = () => {
      if (!printed) process.stdout.write(`Open this address to sign in:\n${url}\n`);
      printed = true;
      resolve();
    };
    try {
      const child = spawn(command, args as string[], { stdio: 'ignore', detached: true });
      child.once('error', printInstead);
      // The launcher may start and then fail (xdg-open with no browser or display exits non-zero).
      child.once('exit', (code) => {
        if (code !== 0) printInstead();
      });
      child.once('spawn', () => {
        child.unref();
        resolve();
      });
    } catch {
      printInstead();
    }
  });
}

/** Node 20 has no global WebSocket: the gateway connection uses the `ws` package. */
const nodeWebSocket: WebSocketConstructor = WebSocket;

/** The client of desktop and server games on Node: loopback redirects, the system browser, `ws`. */
export class Client extends ClientCore {
  constructor(apiBase?: string, webBase?: string, options?: ClientOptions) {
    super(
      apiBase,
      webBase,
      withDefaults(options, {
        opener: systemOpener,
        redirect: loopbackRedirect,
        webSocket: () => nodeWebSocket,
        os: process.platform,
        launchCommands: (dir) => nodeLaunchCommandStore(dir),
        launchJoin: () => launchJoinFromEnvironment(),
        voice: () => nodeVoiceNetwork(),
        voiceLogWriter,
      }),
    );
  }
}

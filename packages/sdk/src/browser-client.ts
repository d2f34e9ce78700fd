import { ClientCore, type ClientOptions, customSchemeRedirect, withDefaults } from './client.js';
import type { WebSocketConstructor } from './gateway/socket.js';
import { browserVoiceNetwork } from './voice/browser-voice.js';

/** Opens the authorization page in a new browser window (or the current one when blocked). */
function browserOpener(url: string): void {
  const window = globalThis as unknown as {
    open?: (url: string, target: string, features: string) => unknown;
    location: { assign(url: string): void };
  };
  const opened = window.open?.(url, '_blank', 'noopener');
  if (!opened) window.location.assign(url);
}

/**
 * The client of browser and mobile-style builds: custom-scheme redirects via HandleAuthorizeRedirect, the
 * browser's WebSocket, and calls over a WebRTC data channel (browser-voice.ts).
 */
export class Client extends ClientCore {
  constructor(apiBase?: string, webBase?: string, options?: ClientOptions) {
    super(
      apiBase,
      webBase,
      withDefaults(options, {
        opener: browserOpener,
        redirect: customSchemeRedirect,
        // The browser's own WebSocket, looked up when a connection opens (no Node built-in in this entry).
        webSocket: () => (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket,
        os: 'browser',
        voice: () => browserVoiceNetwork(),
      }),
    );
  }
}

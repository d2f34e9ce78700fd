import { ClientCore, type ClientOptions, customSchemeRedirect, withDefaults } from './client.js';

/** Opens the authorization page in a new browser window (or the current one when blocked). */
function browserOpener(url: string): void {
  const window = globalThis as unknown as {
    open?: (url: string, target: string, features: string) => unknown;
    location: { assign(url: string): void };
  };
  const opened = window.open?.(url, '_blank', 'noopener');
  if (!opened) window.location.assign(url);
}

/** The client of browser and mobile-style builds: custom-scheme redirects via HandleAuthorizeRedirect. */
export class Client extends ClientCore {
  constructor(apiBase?: string, webBase?: string, options?: ClientOptions) {
    super(apiBase, webBase, withDefaults(options, { opener: browserOpener, redirect: customSchemeRedirect }));
  }
}

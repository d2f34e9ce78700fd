/**
 * Where the authorization server sends the player back. Desktop builds listen on a loopback port
 * (RFC 8252 §7.3); mobile builds register a custom scheme and hand the URL to
 * Client::HandleAuthorizeRedirect (seed, AuthorizationArgs rules 4–5).
 */
export interface RedirectReceiver {
  readonly redirectUri: string;
  /** Resolves with the URL the player was sent back to. */
  wait(): Promise<URL>;
  /** Offers a URL that reached the app (custom schemes); false when it is not for this receiver. */
  offer(url: string): boolean;
  close(): Promise<void>;
}

export interface RedirectContext {
  applicationId: bigint;
  customSchemeParam: string | undefined;
}

/** Makes the receiver of one authorization. */
export type RedirectStrategy = (context: RedirectContext) => Promise<RedirectReceiver>;

/** The standard scheme is a fixed prefix, a hyphen and the application id (rule 5). */
export const DEFAULT_SCHEME_PREFIX = 'discord';
const CALLBACK_PATH = ':/authorize/callback';

/** The redirect URI of rules 4–5: `<scheme>:/authorize/callback`, by default `discord-<id>:/authorize/callback`. */
export function customSchemeRedirectUri(context: RedirectContext): string {
  const scheme = context.customSchemeParam ?? `${DEFAULT_SCHEME_PREFIX}-${context.applicationId}`;
  return `${scheme}${CALLBACK_PATH}`;
}

/** A receiver fed by Client::HandleAuthorizeRedirect. */
export function customSchemeReceiver(context: RedirectContext): RedirectReceiver {
  const redirectUri = customSchemeRedirectUri(context);
  let deliver: (url: URL) => void = () => undefined;
  const arrived = new Promise<URL>((resolve) => {
    deliver = resolve;
  });
  return {
    redirectUri,
    wait: () => arrived,
    offer(url) {
      if (!url.startsWith(`${redirectUri}?`) && url !== redirectUri) return false;
      deliver(new URL(url));
      return true;
    },
    close: async () => undefined,
  };
}

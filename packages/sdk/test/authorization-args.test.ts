import { sdkpp } from '@hearth/sdk';
import { describe, expect, it } from 'vitest';

/**
 * The seed's `sdkpp::AuthorizationArgs` (Resources, AuthorizationArgs): one block per field of its table,
 * then one per numbered rule. Authorization is driven through Client.Authorize with an injected opener,
 * which plays the player's browser: it reads the authorize URL and answers through the redirect.
 */

const API = 'http://hearth.test/api';
const WEB = 'http://hearth.test';
const APPLICATION_ID = 1234567890123456789n;
const BASE64URL_STATE = /^[A-Za-z0-9_-]{43,}$/;

type OnOpen = (url: URL, client: sdkpp.Client) => void | Promise<void>;

/** A client whose opener records each authorize URL, then hands it to `onOpen`. */
function clientOpening(onOpen: OnOpen, redirect?: sdkpp.RedirectStrategy) {
  const opened: URL[] = [];
  const client: sdkpp.Client = new sdkpp.Client(API, WEB, {
    ...(redirect ? { redirect } : {}),
    opener: (url) => {
      const parsed = new URL(url);
      opened.push(parsed);
      return onOpen(parsed, client);
    },
  });
  return { client, opened };
}

/** The player closes the authorization page. */
const closePage: OnOpen = (_url, client) => client.AbortAuthorize();

/** The platform sends the player back to the redirect URI with `params`, through the custom scheme. */
function redirectWith(params: (sent: URL) => Record<string, string>): OnOpen {
  return (sent, client) => {
    const redirectUri = sent.searchParams.get('redirect_uri');
    const taken = client.HandleAuthorizeRedirect(`${redirectUri}?${new URLSearchParams(params(sent))}`);
    if (!taken) throw new Error(`the redirect to ${redirectUri} was not taken`);
  };
}

/** Authorizes with `args` (custom-scheme strategy), closing the page at once; answers the URL opened. */
async function authorizeUrlFor(args: sdkpp.AuthorizationArgs, applicationId = APPLICATION_ID): Promise<URL> {
  const { client, opened } = clientOpening(closePage, sdkpp.customSchemeRedirect);
  client.SetApplicationId(applicationId);
  const { result } = await client.Authorize(args);
  expect(result.Type()).toBe(sdkpp.ErrorType.Aborted);
  expect(opened).toHaveLength(1);
  return opened[0]!;
}

function argsWithScopes(scopes = sdkpp.Client.GetDefaultCommunicationScopes()): sdkpp.AuthorizationArgs {
  const args = new sdkpp.AuthorizationArgs();
  args.SetScopes(scopes);
  return args;
}

function challengeOf(value: string): sdkpp.AuthorizationCodeChallenge {
  const challenge = new sdkpp.AuthorizationCodeChallenge();
  challenge.SetChallenge(value);
  return challenge;
}

/** Every field through its accessor, so one toEqual states the whole object. */
function fieldsOf(args: sdkpp.AuthorizationArgs) {
  const challenge = args.CodeChallenge();
  return {
    clientId: args.ClientId(),
    scopes: args.Scopes(),
    state: args.State(),
    nonce: args.Nonce(),
    codeChallenge: challenge && { challenge: challenge.Challenge(), method: challenge.Method() },
    integrationType: args.IntegrationType(),
    customSchemeParam: args.CustomSchemeParam(),
  };
}

function filledArgs(): sdkpp.AuthorizationArgs {
  const args = new sdkpp.AuthorizationArgs();
  args.SetClientId(42n);
  args.SetScopes('openid sdk.social_layer');
  args.SetState('state-1');
  args.SetNonce('nonce-1');
  args.SetCodeChallenge(challengeOf('challenge-1'));
  args.SetIntegrationType(sdkpp.IntegrationType.UserInstall);
  args.SetCustomSchemeParam('mygame');
  return args;
}

const FILLED = {
  clientId: 42n,
  scopes: 'openid sdk.social_layer',
  state: 'state-1',
  nonce: 'nonce-1',
  codeChallenge: { challenge: 'challenge-1', method: 'S256' },
  integrationType: sdkpp.IntegrationType.UserInstall,
  customSchemeParam: 'mygame',
};

/** Sets every field of `args` to a value different from FILLED's. */
function mutateEveryField(args: sdkpp.AuthorizationArgs): void {
  args.SetClientId(43n);
  args.SetScopes('openid sdk.social_layer_presence');
  args.SetState('state-2');
  args.SetNonce('nonce-2');
  args.SetCodeChallenge(challengeOf('challenge-2'));
  args.SetIntegrationType(sdkpp.IntegrationType.GuildInstall);
  args.SetCustomSchemeParam('othergame');
}

function resultOf(result: sdkpp.ClientResult) {
  return { type: result.Type(), error: result.Error(), successful: result.Successful() };
}

describe('AuthorizationArgs', () => {
  describe('ClientId (uint64_t, optional; default: the value of Client::SetApplicationId)', () => {
    it('is a bigint, 0n by default (0 means "use Client::SetApplicationId")', () => {
      const args = new sdkpp.AuthorizationArgs();
      expect(args.ClientId()).toBe(0n);
      args.SetClientId(APPLICATION_ID);
      expect(args.ClientId()).toBe(APPLICATION_ID);
      args.SetClientId('18446744073709551615');
      expect(args.ClientId()).toBe(18446744073709551615n);
    });

    it('refuses values outside uint64_t with RangeError', () => {
      const args = new sdkpp.AuthorizationArgs();
      expect(() => args.SetClientId(-1n)).toThrow(RangeError);
      expect(() => args.SetClientId(1n << 64n)).toThrow(RangeError);
      expect(() => args.SetClientId('12a')).toThrow(RangeError);
      expect(args.ClientId()).toBe(0n);
    });

    it('Client.Authorize uses the value of SetApplicationId when ClientId is 0', async () => {
      const url = await authorizeUrlFor(argsWithScopes(), 1111n);
      expect(url.searchParams.get('client_id')).toBe('1111');
    });

    it("Client.Authorize uses the args' ClientId when it is set", async () => {
      const args = argsWithScopes();
      args.SetClientId(2222n);
      const url = await authorizeUrlFor(args, 1111n);
      expect(url.searchParams.get('client_id')).toBe('2222');
    });

    it('Client.Authorize refuses with ValidationError when neither is set, opening nothing', async () => {
      const { client, opened } = clientOpening(closePage, sdkpp.customSchemeRedirect);
      const outcome = await client.Authorize(argsWithScopes());
      expect(resultOf(outcome.result)).toEqual({
        type: sdkpp.ErrorType.ValidationError,
        error: 'no ClientId: call SetApplicationId or AuthorizationArgs.SetClientId',
        successful: false,
      });
      expect(opened).toEqual([]);
    });
  });

  describe('Scopes (std::string, required)', () => {
    it("is a string, '' by default", () => {
      const args = new sdkpp.AuthorizationArgs();
      expect(args.Scopes()).toBe('');
      args.SetScopes('openid guilds');
      expect(args.Scopes()).toBe('openid guilds');
    });

    it.each([[''], ['   ']])(
      'Client.Authorize refuses scopes %j with ValidationError, opening nothing',
      async (scopes) => {
        const { client, opened } = clientOpening(closePage, sdkpp.customSchemeRedirect);
        client.SetApplicationId(APPLICATION_ID);
        const outcome = await client.Authorize(argsWithScopes(scopes));
        expect(resultOf(outcome.result)).toEqual({
          type: sdkpp.ErrorType.ValidationError,
          error: 'Scopes is required',
          successful: false,
        });
        expect(outcome.code).toBe('');
        expect(opened).toEqual([]);
      },
    );
  });

  describe('State (std::optional<std::string>)', () => {
    it('is undefined by default and can be set back to undefined', () => {
      const args = new sdkpp.AuthorizationArgs();
      expect(args.State()).toBeUndefined();
      args.SetState('anti-forgery');
      expect(args.State()).toBe('anti-forgery');
      args.SetState(undefined);
      expect(args.State()).toBeUndefined();
    });

    it('when unset, the library generates a secure random state: 43+ base64url characters, new per call', async () => {
      const args = argsWithScopes();
      const first = (await authorizeUrlFor(args)).searchParams.get('state');
      const second = (await authorizeUrlFor(args)).searchParams.get('state');
      expect(first).toMatch(BASE64URL_STATE);
      expect(second).toMatch(BASE64URL_STATE);
      expect(first).not.toBe(second);
      expect(args.State()).toBeUndefined();
    });

    it('when set, it is sent as given', async () => {
      const args = argsWithScopes();
      args.SetState('my-own-state');
      const url = await authorizeUrlFor(args);
      expect(url.searchParams.get('state')).toBe('my-own-state');
    });

    it("a redirect whose state differs is reported as AuthorizationFailed 'state mismatch' (RFC 6749 §10.12)", async () => {
      const { client } = clientOpening(
        redirectWith(() => ({ code: 'stolen-code', state: 'forged' })),
        sdkpp.customSchemeRedirect,
      );
      client.SetApplicationId(APPLICATION_ID);
      const outcome = await client.Authorize(argsWithScopes());
      expect(resultOf(outcome.result)).toEqual({
        type: sdkpp.ErrorType.AuthorizationFailed,
        error: 'state mismatch',
        successful: false,
      });
      expect(outcome.code).toBe('');
    });
  });

  describe('Nonce (std::optional<std::string>)', () => {
    it('is undefined by default and can be set back to undefined', () => {
      const args = new sdkpp.AuthorizationArgs();
      expect(args.Nonce()).toBeUndefined();
      args.SetNonce('n-0S6_WzA2Mj');
      expect(args.Nonce()).toBe('n-0S6_WzA2Mj');
      args.SetNonce(undefined);
      expect(args.Nonce()).toBeUndefined();
    });

    it('is sent as the OpenID Connect nonce only when set', async () => {
      const args = argsWithScopes();
      expect((await authorizeUrlFor(args)).searchParams.has('nonce')).toBe(false);
      args.SetNonce('n-0S6_WzA2Mj');
      expect((await authorizeUrlFor(args)).searchParams.get('nonce')).toBe('n-0S6_WzA2Mj');
    });
  });

  describe('CodeChallenge (std::optional<sdkpp::AuthorizationCodeChallenge>)', () => {
    it('is undefined by default and can be set back to undefined', () => {
      const args = new sdkpp.AuthorizationArgs();
      expect(args.CodeChallenge()).toBeUndefined();
      args.SetCodeChallenge(challengeOf('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'));
      expect(args.CodeChallenge()?.challenge).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
      args.SetCodeChallenge(undefined);
      expect(args.CodeChallenge()).toBeUndefined();
    });

    it('takes the `challenge` of CreateAuthorizationCodeVerifier and sends it with its method', async () => {
      const client = new sdkpp.Client(API, WEB);
      const verifier = client.CreateAuthorizationCodeVerifier();
      const args = argsWithScopes();
      expect((await authorizeUrlFor(args)).searchParams.has('code_challenge')).toBe(false);
      args.SetCodeChallenge(verifier.Challenge());
      const url = await authorizeUrlFor(args);
      expect(url.searchParams.get('code_challenge')).toBe(verifier.Challenge().challenge);
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    });
  });

  describe('IntegrationType (std::optional<sdkpp::IntegrationType>)', () => {
    it('is undefined by default and can be set back to undefined', () => {
      const args = new sdkpp.AuthorizationArgs();
      expect(args.IntegrationType()).toBeUndefined();
      args.SetIntegrationType(sdkpp.IntegrationType.UserInstall);
      expect(args.IntegrationType()).toBe(sdkpp.IntegrationType.UserInstall);
      args.SetIntegrationType(undefined);
      expect(args.IntegrationType()).toBeUndefined();
    });

    it('refuses a value that is not an IntegrationType with RangeError', () => {
      const args = new sdkpp.AuthorizationArgs();
      expect(() => args.SetIntegrationType(Number('7') as sdkpp.IntegrationType)).toThrow(RangeError);
      expect(args.IntegrationType()).toBeUndefined();
    });

    it('is sent as integration_type only when set', async () => {
      const args = argsWithScopes();
      expect((await authorizeUrlFor(args)).searchParams.has('integration_type')).toBe(false);
      args.SetIntegrationType(sdkpp.IntegrationType.UserInstall);
      expect((await authorizeUrlFor(args)).searchParams.get('integration_type')).toBe(
        String(sdkpp.IntegrationType.UserInstall),
      );
    });
  });

  describe('CustomSchemeParam (std::optional<std::string>)', () => {
    it('is undefined by default and can be set back to undefined', () => {
      const args = new sdkpp.AuthorizationArgs();
      expect(args.CustomSchemeParam()).toBeUndefined();
      args.SetCustomSchemeParam('mygame');
      expect(args.CustomSchemeParam()).toBe('mygame');
      args.SetCustomSchemeParam(undefined);
      expect(args.CustomSchemeParam()).toBeUndefined();
    });
  });

  describe('rule 1: the default scope strings', () => {
    it("Client.GetDefaultCommunicationScopes() is 'openid sdk.social_layer' (static)", () => {
      expect(sdkpp.Client.GetDefaultCommunicationScopes()).toBe('openid sdk.social_layer');
    });

    it("Client.GetDefaultPresenceScopes() is 'openid sdk.social_layer_presence' (static)", () => {
      expect(sdkpp.Client.GetDefaultPresenceScopes()).toBe('openid sdk.social_layer_presence');
    });
  });

  describe('rule 2: sdk.social_layer and sdk.social_layer_presence expand on the server', () => {
    it.each([[sdkpp.Client.GetDefaultCommunicationScopes()], [sdkpp.Client.GetDefaultPresenceScopes()]])(
      'the authorize URL carries exactly %j, unexpanded',
      async (scopes) => {
        const url = await authorizeUrlFor(argsWithScopes(scopes));
        expect(url.searchParams.get('scope')).toBe(scopes);
        expect(url.searchParams.getAll('scope')).toHaveLength(1);
      },
    );
  });

  describe('rule 3: additional scopes', () => {
    it('pass through to the authorize URL as given', async () => {
      const scopes = `${sdkpp.Client.GetDefaultPresenceScopes()} guilds relationships.read`;
      const url = await authorizeUrlFor(argsWithScopes(scopes));
      expect(url.searchParams.get('scope')).toBe(
        'openid sdk.social_layer_presence guilds relationships.read',
      );
    });
  });

  describe('rule 4: CustomSchemeParam <scheme> gives the redirect URI <scheme>:/authorize/callback', () => {
    it("'mygame' gives redirect_uri 'mygame:/authorize/callback' (custom-scheme strategy)", async () => {
      const args = argsWithScopes();
      args.SetCustomSchemeParam('mygame');
      const url = await authorizeUrlFor(args);
      expect(url.searchParams.get('redirect_uri')).toBe('mygame:/authorize/callback');
    });

    it("'mygame' wins over the Node loopback default too", async () => {
      const { client, opened } = clientOpening(closePage);
      client.SetApplicationId(APPLICATION_ID);
      const args = argsWithScopes();
      args.SetCustomSchemeParam('mygame');
      const outcome = await client.Authorize(args);
      expect(opened[0]?.searchParams.get('redirect_uri')).toBe('mygame:/authorize/callback');
      expect(outcome.redirectUri).toBe('mygame:/authorize/callback');
    });

    it('the code returned through that scheme completes the authorization', async () => {
      const { client } = clientOpening(
        redirectWith((sent) => ({ code: 'the-code', state: sent.searchParams.get('state') ?? '' })),
        sdkpp.customSchemeRedirect,
      );
      client.SetApplicationId(APPLICATION_ID);
      const args = argsWithScopes();
      args.SetCustomSchemeParam('mygame');
      const outcome = await client.Authorize(args);
      expect(resultOf(outcome.result)).toEqual({ type: sdkpp.ErrorType.None, error: '', successful: true });
      expect(outcome.code).toBe('the-code');
      expect(outcome.redirectUri).toBe('mygame:/authorize/callback');
    });
  });

  describe('rule 5: without CustomSchemeParam, the standard scheme', () => {
    it("custom-scheme strategy: 'discord-<application id>:/authorize/callback'", async () => {
      const url = await authorizeUrlFor(argsWithScopes(), APPLICATION_ID);
      expect(url.searchParams.get('redirect_uri')).toBe(`discord-${APPLICATION_ID}:/authorize/callback`);
    });

    it('custom-scheme strategy: the application id is the ClientId of the args when set', async () => {
      const args = argsWithScopes();
      args.SetClientId(777n);
      const url = await authorizeUrlFor(args, APPLICATION_ID);
      expect(url.searchParams.get('redirect_uri')).toBe('discord-777:/authorize/callback');
    });

    it('Node default strategy: a loopback http://127.0.0.1:<port>/callback that receives the code', async () => {
      const { client, opened } = clientOpening(async (sent) => {
        const back = new URL(sent.searchParams.get('redirect_uri') ?? '');
        back.searchParams.set('code', 'loopback-code');
        back.searchParams.set('state', sent.searchParams.get('state') ?? '');
        const page = await fetch(back);
        await page.text();
      });
      client.SetApplicationId(APPLICATION_ID);
      const outcome = await client.Authorize(argsWithScopes());
      const redirectUri = opened[0]?.searchParams.get('redirect_uri');
      expect(redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      expect(resultOf(outcome.result)).toEqual({ type: sdkpp.ErrorType.None, error: '', successful: true });
      expect(outcome.code).toBe('loopback-code');
      expect(outcome.redirectUri).toBe(redirectUri);
    });
  });

  describe('rule 6: CustomSchemeParam tells apart several games of one developer', () => {
    it('two games get distinct redirect URIs, and each takes only its own redirect', async () => {
      const gameA = argsWithScopes();
      gameA.SetClientId(1001n);
      gameA.SetCustomSchemeParam('studio-racer');
      const gameB = argsWithScopes();
      gameB.SetClientId(1002n);
      gameB.SetCustomSchemeParam('studio-puzzler');

      const redirectA = (await authorizeUrlFor(gameA)).searchParams.get('redirect_uri');
      const redirectB = (await authorizeUrlFor(gameB)).searchParams.get('redirect_uri');
      expect(redirectA).toBe('studio-racer:/authorize/callback');
      expect(redirectB).toBe('studio-puzzler:/authorize/callback');

      // Game B, waiting for its own redirect, ignores the one meant for game A.
      const { client } = clientOpening((sent, self) => {
        expect(self.HandleAuthorizeRedirect(`${redirectA}?code=a&state=x`)).toBe(false);
        self.AbortAuthorize();
        expect(sent.searchParams.get('redirect_uri')).toBe(redirectB);
      }, sdkpp.customSchemeRedirect);
      expect((await client.Authorize(gameB)).result.Type()).toBe(sdkpp.ErrorType.Aborted);
    });
  });

  describe('rule 7: move and copy construction, move and copy assignment, operator bool', () => {
    it('copy construction `new AuthorizationArgs(a)` is deep and independent', () => {
      const a = filledArgs();
      const b = new sdkpp.AuthorizationArgs(a);
      expect(fieldsOf(b)).toEqual(FILLED);
      mutateEveryField(b);
      b.CodeChallenge()?.SetChallenge('changed through the accessor');
      expect(fieldsOf(a)).toEqual(FILLED);
      mutateEveryField(a);
      expect(fieldsOf(b).codeChallenge).toEqual({ challenge: 'challenge-2', method: 'S256' });
      expect(a.IsValid() && b.IsValid()).toBe(true);
    });

    it("copying keeps the CodeChallenge apart: changing the copy's leaves the original's", () => {
      const a = filledArgs();
      const b = new sdkpp.AuthorizationArgs(a);
      const challenge = challengeOf('copy-only');
      b.SetCodeChallenge(challenge);
      challenge.SetMethod('plain');
      expect(a.CodeChallenge()?.Challenge()).toBe('challenge-1');
      expect(b.CodeChallenge()?.Challenge()).toBe('copy-only');
      expect(b.CodeChallenge()?.Method()).toBe('S256');
    });

    it('copy assignment `b.Assign(a)` is deep and independent, and returns b', () => {
      const a = filledArgs();
      const b = new sdkpp.AuthorizationArgs();
      expect(b.Assign(a)).toBe(b);
      expect(fieldsOf(b)).toEqual(FILLED);
      mutateEveryField(b);
      expect(fieldsOf(a)).toEqual(FILLED);
      expect(a.Assign(a)).toBe(a);
      expect(fieldsOf(a)).toEqual(FILLED);
    });

    it('move construction `AuthorizationArgs.Move(a)` takes the values and leaves a invalid', () => {
      const a = filledArgs();
      const b = sdkpp.AuthorizationArgs.Move(a);
      expect(fieldsOf(b)).toEqual(FILLED);
      expect(b.IsValid()).toBe(true);
      expect(a.IsValid()).toBe(false);
      expect(() => a.Scopes()).toThrow(sdkpp.UninitializedInstanceError);
      expect(() => a.SetScopes('openid')).toThrow(sdkpp.UninitializedInstanceError);
      expect(() => sdkpp.AuthorizationArgs.Move(a)).toThrow(sdkpp.UninitializedInstanceError);
    });

    it('move assignment `b.MoveAssign(a)` takes the values, leaves a invalid, and returns b', () => {
      const a = filledArgs();
      const b = new sdkpp.AuthorizationArgs();
      expect(b.MoveAssign(a)).toBe(b);
      expect(fieldsOf(b)).toEqual(FILLED);
      expect(a.IsValid()).toBe(false);
      expect(() => a.ClientId()).toThrow(sdkpp.UninitializedInstanceError);
      expect(() => new sdkpp.AuthorizationArgs().MoveAssign(a)).toThrow(sdkpp.UninitializedInstanceError);
    });

    it('a moved-from instance is valid again after an assignment', () => {
      const a = filledArgs();
      sdkpp.AuthorizationArgs.Move(a);
      a.Assign(filledArgs());
      expect(a.IsValid()).toBe(true);
      expect(fieldsOf(a)).toEqual(FILLED);
    });

    it('IsValid() is the boolean conversion: true for a constructed instance, false for nullobj', () => {
      expect(new sdkpp.AuthorizationArgs().IsValid()).toBe(true);
      expect(new sdkpp.AuthorizationArgs(filledArgs()).IsValid()).toBe(true);
      expect(sdkpp.AuthorizationArgs.nullobj.IsValid()).toBe(false);
    });
  });

  describe('rule 8: the static member nullobj is an uninitialized instance', () => {
    const nullobj = sdkpp.AuthorizationArgs.nullobj;
    const uses: [string, (args: sdkpp.AuthorizationArgs) => unknown][] = [
      ['ClientId()', (args) => args.ClientId()],
      ['SetClientId()', (args) => args.SetClientId(1n)],
      ['Scopes()', (args) => args.Scopes()],
      ['SetScopes()', (args) => args.SetScopes('openid')],
      ['State()', (args) => args.State()],
      ['SetState()', (args) => args.SetState('state')],
      ['Nonce()', (args) => args.Nonce()],
      ['SetNonce()', (args) => args.SetNonce('nonce')],
      ['CodeChallenge()', (args) => args.CodeChallenge()],
      ['SetCodeChallenge()', (args) => args.SetCodeChallenge(challengeOf('c'))],
      ['IntegrationType()', (args) => args.IntegrationType()],
      ['SetIntegrationType()', (args) => args.SetIntegrationType(sdkpp.IntegrationType.GuildInstall)],
      ['CustomSchemeParam()', (args) => args.CustomSchemeParam()],
      ['SetCustomSchemeParam()', (args) => args.SetCustomSchemeParam('mygame')],
    ];

    it('is invalid', () => {
      expect(nullobj).toBeInstanceOf(sdkpp.AuthorizationArgs);
      expect(nullobj.IsValid()).toBe(false);
    });

    it.each(uses)('%s on nullobj throws UninitializedInstanceError with a clear message', (_name, use) => {
      expect(() => use(nullobj)).toThrow(sdkpp.UninitializedInstanceError);
      expect(() => use(nullobj)).toThrow(
        'AuthorizationArgs is uninitialized (nullobj or moved from): it holds no value to read or set',
      );
      expect(nullobj.IsValid()).toBe(false);
    });

    it('copy assignment into nullobj throws, and nullobj stays invalid', () => {
      expect(() => nullobj.Assign(filledArgs())).toThrow(sdkpp.UninitializedInstanceError);
      expect(() => nullobj.Assign(filledArgs())).toThrow(/AuthorizationArgs\.nullobj is uninitialized/);
      expect(nullobj.IsValid()).toBe(false);
      expect(() => nullobj.Scopes()).toThrow(sdkpp.UninitializedInstanceError);
    });

    it('move assignment into nullobj throws, leaves the source intact, and nullobj stays invalid', () => {
      const source = filledArgs();
      expect(() => nullobj.MoveAssign(source)).toThrow(sdkpp.UninitializedInstanceError);
      expect(nullobj.IsValid()).toBe(false);
      expect(fieldsOf(source)).toEqual(FILLED);
    });

    it('Client.Authorize refuses nullobj with ValidationError, opening nothing', async () => {
      const { client, opened } = clientOpening(closePage, sdkpp.customSchemeRedirect);
      client.SetApplicationId(APPLICATION_ID);
      const outcome = await client.Authorize(nullobj);
      expect(resultOf(outcome.result)).toEqual({
        type: sdkpp.ErrorType.ValidationError,
        error: 'AuthorizationArgs is uninitialized',
        successful: false,
      });
      expect(opened).toEqual([]);
    });
  });

  describe('Client.Authorize outcomes (seed, Errors: a player cancel is told apart from a server error)', () => {
    async function authorizeAnswering(params: Record<string, string>) {
      const { client } = clientOpening(
        redirectWith((sent) => ({ ...params, state: sent.searchParams.get('state') ?? '' })),
        sdkpp.customSchemeRedirect,
      );
      client.SetApplicationId(APPLICATION_ID);
      return client.Authorize(argsWithScopes());
    }

    it('error=access_denied (the player cancelled) is ErrorType.Aborted', async () => {
      const outcome = await authorizeAnswering({ error: 'access_denied' });
      expect(resultOf(outcome.result)).toEqual({
        type: sdkpp.ErrorType.Aborted,
        error: 'access_denied',
        successful: false,
      });
      expect(outcome.code).toBe('');
    });

    it('error=invalid_scope (the server refused) is ErrorType.AuthorizationFailed', async () => {
      const outcome = await authorizeAnswering({
        error: 'invalid_scope',
        error_description: 'unknown scope: sdk.nope',
      });
      expect(resultOf(outcome.result)).toEqual({
        type: sdkpp.ErrorType.AuthorizationFailed,
        error: 'invalid_scope: unknown scope: sdk.nope',
        successful: false,
      });
      expect(outcome.code).toBe('');
    });

    it('a redirect without a code is ErrorType.AuthorizationFailed', async () => {
      const outcome = await authorizeAnswering({});
      expect(outcome.result.Type()).toBe(sdkpp.ErrorType.AuthorizationFailed);
    });

    it('AbortAuthorize (the player closed the page) is ErrorType.Aborted', async () => {
      const { client } = clientOpening(closePage, sdkpp.customSchemeRedirect);
      client.SetApplicationId(APPLICATION_ID);
      const outcome = await client.Authorize(argsWithScopes());
      expect(resultOf(outcome.result)).toEqual({
        type: sdkpp.ErrorType.Aborted,
        error: 'authorization aborted',
        successful: false,
      });
    });

    it('HandleAuthorizeRedirect takes nothing when no authorization is waiting', () => {
      const client = new sdkpp.Client(API, WEB, { redirect: sdkpp.customSchemeRedirect });
      expect(client.HandleAuthorizeRedirect(`discord-${APPLICATION_ID}:/authorize/callback?code=x`)).toBe(
        false,
      );
    });

    it('the callback and the Promise deliver the same values', async () => {
      const { client } = clientOpening(
        redirectWith((sent) => ({ code: 'same-code', state: sent.searchParams.get('state') ?? '' })),
        sdkpp.customSchemeRedirect,
      );
      client.SetApplicationId(APPLICATION_ID);
      const delivered: sdkpp.AuthorizationOutcome[] = [];
      const outcome = await client.Authorize(argsWithScopes(), (result, code, redirectUri) => {
        delivered.push({ result, code, redirectUri });
      });
      expect(delivered).toHaveLength(1);
      expect(delivered[0]?.result).toBe(outcome.result);
      expect(delivered[0]?.code).toBe('same-code');
      expect(delivered[0]?.code).toBe(outcome.code);
      expect(delivered[0]?.redirectUri).toBe(`discord-${APPLICATION_ID}:/authorize/callback`);
      expect(delivered[0]?.redirectUri).toBe(outcome.redirectUri);
    });
  });
});

import {
  AuthorizationArgs,
  type AuthorizationCodeChallenge,
  type AuthorizationOutcome,
  type AuthorizeRequestCallback,
  Client,
  ClientError,
  type ClientOptions,
  type ClientResult,
  ClientStatus,
  IntegrationType,
  type StatusChangedCallback,
  sdkpp,
  UserHandle,
  type WebSocketConstructor,
} from '@hearth/sdk';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { WebSocket } from 'ws';

/**
 * Type tests of the public surface (STYLE 13), checked by `tsc -p tsconfig.json` in `npm test`: the seed's
 * C++ types as TypeScript maps them (uint64_t → bigint, std::optional<T> → T | undefined).
 */

describe('AuthorizationArgs: field types (seed, Resources, AuthorizationArgs)', () => {
  it('ClientId (uint64_t) is a bigint; SetClientId takes a bigint or a decimal string', () => {
    expectTypeOf<ReturnType<AuthorizationArgs['ClientId']>>().toEqualTypeOf<bigint>();
    expectTypeOf<AuthorizationArgs['SetClientId']>().parameter(0).toEqualTypeOf<bigint | string>();
    const args = new AuthorizationArgs();
    // @ts-expect-error a fractional number is no uint64_t
    expect(() => args.SetClientId(1.5)).toThrow(RangeError);
  });

  it('Scopes (std::string, required) is a string; SetScopes does not take undefined', () => {
    expectTypeOf<ReturnType<AuthorizationArgs['Scopes']>>().toEqualTypeOf<string>();
    expectTypeOf<AuthorizationArgs['SetScopes']>().parameter(0).toEqualTypeOf<string>();
    const args = new AuthorizationArgs();
    // @ts-expect-error Scopes is required: not an optional type
    args.SetScopes(undefined);
  });

  it('State, Nonce, CustomSchemeParam (std::optional<std::string>) are string | undefined', () => {
    expectTypeOf<ReturnType<AuthorizationArgs['State']>>().toEqualTypeOf<string | undefined>();
    expectTypeOf<ReturnType<AuthorizationArgs['Nonce']>>().toEqualTypeOf<string | undefined>();
    expectTypeOf<ReturnType<AuthorizationArgs['CustomSchemeParam']>>().toEqualTypeOf<string | undefined>();
    expectTypeOf<AuthorizationArgs['SetState']>().parameter(0).toEqualTypeOf<string | undefined>();
    expectTypeOf<AuthorizationArgs['SetNonce']>().parameter(0).toEqualTypeOf<string | undefined>();
    expectTypeOf<AuthorizationArgs['SetCustomSchemeParam']>()
      .parameter(0)
      .toEqualTypeOf<string | undefined>();
  });

  it('CodeChallenge (std::optional<AuthorizationCodeChallenge>) is AuthorizationCodeChallenge | undefined', () => {
    expectTypeOf<ReturnType<AuthorizationArgs['CodeChallenge']>>().toEqualTypeOf<
      AuthorizationCodeChallenge | undefined
    >();
    expectTypeOf<AuthorizationCodeChallenge['challenge']>().toEqualTypeOf<string>();
  });

  it('IntegrationType (std::optional<IntegrationType>) is IntegrationType | undefined, a closed union', () => {
    expectTypeOf<ReturnType<AuthorizationArgs['IntegrationType']>>().toEqualTypeOf<
      IntegrationType | undefined
    >();
    expectTypeOf<IntegrationType>().toEqualTypeOf<0 | 1>();
    const args = new AuthorizationArgs();
    // @ts-expect-error only the IntegrationType values compile
    expect(() => args.SetIntegrationType(7)).toThrow(RangeError);
  });

  it('rule 7: IsValid() is the boolean conversion; Move, Assign and MoveAssign keep the type', () => {
    expectTypeOf<ReturnType<AuthorizationArgs['IsValid']>>().toEqualTypeOf<boolean>();
    expectTypeOf(AuthorizationArgs.Move).returns.toEqualTypeOf<AuthorizationArgs>();
    expectTypeOf<ReturnType<AuthorizationArgs['Assign']>>().toEqualTypeOf<AuthorizationArgs>();
    expectTypeOf<ReturnType<AuthorizationArgs['MoveAssign']>>().toEqualTypeOf<AuthorizationArgs>();
  });

  it('rule 8: nullobj is a static AuthorizationArgs', () => {
    expectTypeOf(AuthorizationArgs.nullobj).toEqualTypeOf<AuthorizationArgs>();
  });
});

describe('Client: operation types (seed, Library operations)', () => {
  it('Authorize takes AuthorizationArgs and resolves with {result, code, redirectUri}', () => {
    expectTypeOf<Client['Authorize']>().parameter(0).toEqualTypeOf<AuthorizationArgs>();
    expectTypeOf<ReturnType<Client['Authorize']>>().toEqualTypeOf<
      Promise<{ result: ClientResult; code: string; redirectUri: string }>
    >();
    expectTypeOf<AuthorizationOutcome>().toEqualTypeOf<{
      result: ClientResult;
      code: string;
      redirectUri: string;
    }>();
  });

  it('rule 1: GetDefaultCommunicationScopes and GetDefaultPresenceScopes are static', () => {
    expectTypeOf(Client.GetDefaultCommunicationScopes).toEqualTypeOf<() => string>();
    expectTypeOf(Client.GetDefaultPresenceScopes).toEqualTypeOf<() => string>();
    expectTypeOf<Client>().not.toHaveProperty('GetDefaultCommunicationScopes');
    expectTypeOf<Client>().not.toHaveProperty('GetDefaultPresenceScopes');
  });

  it('SetApplicationId takes a uint64_t as bigint or decimal string; SetHttpRequestTimeout takes ms', () => {
    expectTypeOf<Client['SetApplicationId']>().parameter(0).toEqualTypeOf<bigint | string>();
    expectTypeOf<Client['SetHttpRequestTimeout']>().parameter(0).toEqualTypeOf<number>();
    expectTypeOf<ReturnType<Client['GetHttpRequestTimeout']>>().toEqualTypeOf<number>();
  });

  it('the namespace sdkpp and the named exports are the same values', () => {
    expect(sdkpp.Client).toBe(Client);
    expect(sdkpp.AuthorizationArgs).toBe(AuthorizationArgs);
    expect(sdkpp.IntegrationType).toBe(IntegrationType);
    expectTypeOf<sdkpp.Client>().toEqualTypeOf<Client>();
    expectTypeOf<sdkpp.AuthorizationArgs>().toEqualTypeOf<AuthorizationArgs>();
  });
});

describe('Client: the gateway connection (seed, Library operations: GetCurrentUserV2, AUTHORIZE_REQUEST)', () => {
  it('Connect and Disconnect take nothing and return void: progress arrives through the status callback', () => {
    expectTypeOf<Client['Connect']>().toEqualTypeOf<() => void>();
    expectTypeOf<Client['Disconnect']>().toEqualTypeOf<() => void>();
  });

  it('Client.Status and Client.Error are the const objects; their types are closed unions', () => {
    expect(Client.Status).toBe(ClientStatus);
    expect(Client.Error).toBe(ClientError);
    expectTypeOf(Client.Status.Ready).toEqualTypeOf<3>();
    expectTypeOf<ClientStatus>().toEqualTypeOf<0 | 1 | 2 | 3 | 4 | 5>();
    expectTypeOf<ClientError>().toEqualTypeOf<0 | 1 | 2 | 3>();
    expectTypeOf<ReturnType<Client['GetStatus']>>().toEqualTypeOf<ClientStatus>();
    expectTypeOf(Client.StatusToString).toEqualTypeOf<(status: ClientStatus) => string>();
    expectTypeOf(Client.ErrorToString).toEqualTypeOf<(error: ClientError) => string>();
  });

  it('SetStatusChangedCallback takes (status, error, errorDetail)', () => {
    expectTypeOf<StatusChangedCallback>().toEqualTypeOf<
      (status: ClientStatus, error: ClientError, errorDetail: number) => void
    >();
    expectTypeOf<Client['SetStatusChangedCallback']>().parameter(0).toEqualTypeOf<StatusChangedCallback>();
    const client = new Client();
    // @ts-expect-error the status is a Client.Status value, not a string
    client.SetStatusChangedCallback((status: string) => status);
  });

  it('GetCurrentUserV2 returns an optional UserHandle (std::optional → T | undefined)', () => {
    expectTypeOf<ReturnType<Client['GetCurrentUserV2']>>().toEqualTypeOf<UserHandle | undefined>();
    expectTypeOf<ReturnType<UserHandle['Id']>>().toEqualTypeOf<bigint>();
    expectTypeOf<ReturnType<UserHandle['Username']>>().toEqualTypeOf<string>();
    expectTypeOf<ReturnType<UserHandle['DisplayName']>>().toEqualTypeOf<string>();
    expectTypeOf<ReturnType<UserHandle['IsProvisional']>>().toEqualTypeOf<boolean>();
    expect(sdkpp.UserHandle).toBe(UserHandle);
  });

  it('RegisterAuthorizeRequestCallback takes (applicationId: bigint, scopes: string); Remove takes nothing', () => {
    expectTypeOf<AuthorizeRequestCallback>().toEqualTypeOf<(applicationId: bigint, scopes: string) => void>();
    expectTypeOf<Client['RegisterAuthorizeRequestCallback']>()
      .parameter(0)
      .toEqualTypeOf<AuthorizeRequestCallback>();
    expectTypeOf<Client['RemoveAuthorizeRequestCallback']>().toEqualTypeOf<() => void>();
    // A callback that ignores the arguments fits, as the C++ std::function<void()> does.
    new Client().RegisterAuthorizeRequestCallback(() => undefined);
  });

  it('RegisterLaunchCommand takes (applicationId, command: string) and answers a bool, as the C++ does', () => {
    expectTypeOf<Client['RegisterLaunchCommand']>().toEqualTypeOf<
      (applicationId: bigint | string, command: string) => boolean
    >();
    expectTypeOf<ClientOptions['launchCommandsDir']>().toEqualTypeOf<string | undefined>();
  });

  it('the webSocket option takes a WebSocket constructor: the `ws` package fits', () => {
    expectTypeOf<ClientOptions['webSocket']>().toEqualTypeOf<WebSocketConstructor | undefined>();
    expectTypeOf(WebSocket).toExtend<WebSocketConstructor>();
  });
});

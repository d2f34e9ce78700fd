import {
  AuthorizationArgs,
  type AuthorizationCodeChallenge,
  type AuthorizationOutcome,
  Client,
  type ClientResult,
  IntegrationType,
  sdkpp,
} from '@hearth/sdk';
import { describe, expect, expectTypeOf, it } from 'vitest';

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

import {
  ApplicationFlags,
  defaultAvatarIndex,
  defaultRedirectUri,
  expandScopes,
  isInEffect,
  isSnowflake,
  Limits,
  Scopes,
  SNOWFLAKE_EPOCH,
  snowflakeFromTimestamp,
  snowflakeTimestamp,
  wireFlags,
} from '@hearth/protocol';
import { describe, expect, it } from 'vitest';

describe('snowflakes (PROTOCOL.md §E.4)', () => {
  it('reads the timestamp from the top 42 bits, after the 2015 epoch', () => {
    expect(snowflakeTimestamp('175928847299117063')).toBe(1462015105796);
    expect(snowflakeTimestamp(snowflakeFromTimestamp(SNOWFLAKE_EPOCH + 1234))).toBe(SNOWFLAKE_EPOCH + 1234);
  });

  it.each([
    ['0', true],
    ['175928847299117063', true],
    ['18446744073709551615', true],
    ['18446744073709551616', false],
    ['01', false],
    ['-1', false],
    ['1.5', false],
    ['', false],
  ])('isSnowflake(%j) is %s', (value, expected) => {
    expect(isSnowflake(value)).toBe(expected);
  });
});

describe('dated rules (seed: Limits, Versioning)', () => {
  it.each([
    ['fileUploadLimit10MiB', '2025-01-16T00:00:00Z'],
    ['requestAllGuildMembersLimitAllServers', '2025-10-01T00:00:00Z'],
    ['permissionsOf2026_02_23', '2026-02-23T00:00:00Z'],
    ['endToEndEncryptedCallsOnly', '2026-03-01T00:00:00Z'],
    ['legacyPublisherConnectionsHidden', '2026-07-10T00:00:00Z'],
    ['createGuildRemovedForApps', '2025-07-15T00:00:00Z'],
    ['voiceGatewayV4Required', '2024-11-18T00:00:00Z'],
  ] as const)('%s takes effect at %s and not a millisecond before', (rule, iso) => {
    expect(isInEffect(rule, Date.parse(iso) - 1)).toBe(false);
    expect(isInEffect(rule, Date.parse(iso))).toBe(true);
  });

  it('holds the upload limit of both sides of 16 January 2025', () => {
    expect(Limits.fileUploadBytesBefore20250116).toBe(25 * 1024 * 1024);
    expect(Limits.fileUploadBytes).toBe(10 * 1024 * 1024);
  });
});

describe('scopes (seed, Authentication 2; rule 2 of AuthorizationArgs)', () => {
  it('sdk.social_layer_presence expands to what presence needs, not to messages or lobbies', () => {
    const scopes = expandScopes([Scopes.SdkSocialLayerPresence]);
    for (const scope of [
      Scopes.Identify,
      Scopes.RelationshipsRead,
      Scopes.GatewayConnect,
      Scopes.ActivitiesWrite,
    ]) {
      expect(scopes.has(scope)).toBe(true);
    }
    expect(scopes.has(Scopes.LobbiesWrite)).toBe(false);
    expect(scopes.has(Scopes.DmChannelsMessagesWrite)).toBe(false);
  });

  it('sdk.social_layer adds messages, guilds and lobbies to the presence set', () => {
    const scopes = expandScopes([Scopes.SdkSocialLayer]);
    for (const scope of [
      Scopes.LobbiesWrite,
      Scopes.DmChannelsMessagesWrite,
      Scopes.Guilds,
      Scopes.Identify,
    ]) {
      expect(scopes.has(scope)).toBe(true);
    }
    expect(scopes.has(Scopes.Email)).toBe(false);
  });
});

describe('user records (seed: Records, User)', () => {
  it('a migrated user (discriminator "0") takes default avatar (id >> 22) % 6', () => {
    const id = '175928847299117063';
    expect(defaultAvatarIndex({ id, discriminator: '0' })).toBe(Number((BigInt(id) >> 22n) % 6n));
  });

  it('a legacy user takes default avatar discriminator % 5', () => {
    expect(defaultAvatarIndex({ id: '1', discriminator: '1337' })).toBe(1337 % 5);
  });
});

describe('application flags (seed: Records, Application)', () => {
  it('`flags` is the low 32 bits; `flags_new` is every bit as a string', () => {
    const flags = ApplicationFlags.GatewayPresenceLimited | ApplicationFlags.PublisherLinkingApproved;
    expect(wireFlags(flags)).toEqual({ flags: 1 << 13, flags_new: flags.toString() });
  });

  it('the default mobile redirect is discord-<id>:/authorize/callback (rule 5)', () => {
    expect(defaultRedirectUri('123')).toBe('discord-123:/authorize/callback');
  });
});

import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { UserObject } from '../src/domains/accounts/schemas.js';
import { forSerialization } from '../src/http/serializer-schema.js';

/**
 * Response schemas are compiled in a form fast-json-stringify writes without a validator per value
 * (src/http/serializer-schema.ts): for every value the schema accepts, the JSON must be the same.
 */
const build = SerializerSelector()({}, {});
const serializer = (schema: unknown) => build({ schema, method: 'GET', url: '/', httpStatus: '200' });

function sameJson(schema: unknown, values: unknown[]): void {
  const original = serializer(schema);
  const rewritten = serializer(forSerialization(schema));
  for (const value of values) expect(rewritten(value)).toBe(original(value));
}

const user = {
  id: '1',
  username: 'ada',
  discriminator: '0',
  global_name: null,
  avatar: 'a1b2',
  public_flags: 0,
  flags: 0,
  banner: null,
  accent_color: 0x00ff00,
  avatar_decoration_data: null,
  collectibles: null,
  primary_guild: null,
};

describe('response schemas for serialization', () => {
  it('a user object, with and without its nullable fields and nested object, writes the same JSON', () => {
    sameJson(UserObject, [
      user,
      { ...user, global_name: 'Ada', avatar: null, bot: true, accent_color: null, email: null },
      {
        ...user,
        primary_guild: { identity_guild_id: '2', identity_enabled: null, tag: 'HRTH', badge: null },
        mfa_enabled: false,
        locale: 'en-US',
        premium_type: 2,
        email: 'ada@example.com',
        verified: true,
      },
    ]);
    expect(JSON.stringify(forSerialization(UserObject))).not.toContain('anyOf');
  });

  it('unions of literals and of primitive types, in arrays and maps, write the same JSON', () => {
    const schema = Type.Object({
      kind: Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3)]),
      status: Type.Union([Type.Literal('online'), Type.Literal('idle'), Type.Null()]),
      value: Type.Union([Type.String(), Type.Integer(), Type.Boolean()]),
      amount: Type.Union([Type.Integer(), Type.Number()]),
      tags: Type.Array(Type.Union([Type.String({ maxLength: 20 }), Type.Null()])),
      extra: Type.Record(Type.String(), Type.Union([Type.Integer(), Type.Null()])),
    });
    sameJson(schema, [
      { kind: 1, status: 'online', value: 'x', amount: 3, tags: ['a', null], extra: { a: 1, b: null } },
      { kind: 3, status: null, value: 7, amount: 2.5, tags: [], extra: {} },
      { kind: 2, status: 'idle', value: false, amount: -1, tags: [null], extra: { z: null } },
    ]);
    expect(JSON.stringify(forSerialization(schema))).not.toContain('anyOf');
  });

  it('a union of object shapes is kept, its branches rewritten', () => {
    const schema = Type.Object({
      component: Type.Union([
        Type.Object({ type: Type.Literal(1), label: Type.Union([Type.String(), Type.Null()]) }),
        Type.Object({ type: Type.Literal(2), count: Type.Integer() }),
      ]),
    });
    sameJson(schema, [
      { component: { type: 1, label: null } },
      { component: { type: 1, label: 'go' } },
      { component: { type: 2, count: 4 } },
    ]);
    const rewritten = forSerialization(schema) as { properties: { component: { anyOf: unknown[] } } };
    expect(rewritten.properties.component.anyOf).toHaveLength(2);
  });
});

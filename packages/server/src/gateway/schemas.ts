import { Type } from 'typebox';

export const GatewayObject = Type.Object({ url: Type.String() });

export const GatewayBotObject = Type.Object({
  url: Type.String(),
  shards: Type.Integer(),
  session_start_limit: Type.Object({
    total: Type.Integer(),
    remaining: Type.Integer(),
    reset_after: Type.Integer(),
    max_concurrency: Type.Integer(),
  }),
});

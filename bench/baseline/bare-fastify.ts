// The baselines: Fastify 5 with its defaults and only the route a benchmark needs, so that the gap to
// Hearth is what Hearth does per request (auth lookup, rate limits, hooks, storage, crypto).
//   --body <user JSON>         GET /api/v10/users/@me answers that user (read-path)
//   --token-body <token JSON>  POST /api/v10/oauth2/token reads the form and answers that token response
//                              (token-exchange)
//   --provisional-body <JSON>  POST /api/v10/partner-sdk/token/bot reads the JSON body and answers that
//                              provisional token response (provisional-token)
import { parseArgs } from 'node:util';
import Fastify from 'fastify';

const { values } = parseArgs({
  options: {
    body: { type: 'string' },
    'token-body': { type: 'string' },
    'provisional-body': { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
  },
});
if (
  values.body === undefined &&
  values['token-body'] === undefined &&
  values['provisional-body'] === undefined
) {
  throw new Error('usage: bare-fastify.ts [--body <JSON user object>] [--token-body <JSON token response>]');
}

const app = Fastify();

if (values.body !== undefined) {
  const user: unknown = JSON.parse(values.body);
  const unauthorized = { message: '401: Unauthorized', code: 0 };
  app.get('/api/v10/users/@me', async (request, reply) => {
    if (!request.headers.authorization) return reply.code(401).send(unauthorized);
    return user;
  });
}

if (values['token-body'] !== undefined) {
  // HTTP, form parsing and JSON only: no client authentication, no code lookup, no token minted.
  const tokens: unknown = JSON.parse(values['token-body']);
  const invalidRequest = { error: 'invalid_request' };
  // Fastify parses no forms by default; Hearth reads them with URLSearchParams too.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );
  app.post('/api/v10/oauth2/token', async (request, reply) => {
    const form = request.body as Record<string, string> | undefined;
    if (form?.['grant_type'] !== 'authorization_code' || !form['code'] || !form['client_id']) {
      return reply.code(400).send(invalidRequest);
    }
    return reply.headers({ 'cache-control': 'no-store', pragma: 'no-cache' }).send(tokens);
  });
}

if (values['provisional-body'] !== undefined) {
  // HTTP and JSON only: no bot authentication, no account lookup or creation, no token minted or signed.
  const tokens: unknown = JSON.parse(values['provisional-body']);
  const unauthorized = { message: '401: Unauthorized', code: 0 };
  app.post('/api/v10/partner-sdk/token/bot', async (request, reply) => {
    const body = request.body as { external_user_id?: unknown } | undefined;
    if (!request.headers.authorization) return reply.code(401).send(unauthorized);
    if (typeof body?.external_user_id !== 'string') return reply.code(400).send({ code: 50035 });
    return reply.headers({ 'cache-control': 'no-store', pragma: 'no-cache' }).send(tokens);
  });
}

await app.listen({ host: values.host, port: 0 });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
process.stdout.write(`bare-fastify listening on http://${values.host}:${port}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

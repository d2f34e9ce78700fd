// The read-path baseline: Fastify 5 with its defaults and one route answering a constant user object,
// so that the gap to Hearth is what Hearth does per request (auth lookup, rate limits, hooks, storage).
import { parseArgs } from 'node:util';
import Fastify from 'fastify';

const { values } = parseArgs({
  options: { body: { type: 'string' }, host: { type: 'string', default: '127.0.0.1' } },
});
if (values.body === undefined) throw new Error('usage: bare-fastify.ts --body <JSON user object>');
const user: unknown = JSON.parse(values.body);
const unauthorized = { message: '401: Unauthorized', code: 0 };

const app = Fastify();
app.get('/api/v10/users/@me', async (request, reply) => {
  if (!request.headers.authorization) return reply.code(401).send(unauthorized);
  return user;
});

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

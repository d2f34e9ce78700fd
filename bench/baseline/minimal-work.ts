// The minimal-work baselines of issue 20: Fastify 5 doing only what no token endpoint can skip, on SQLite
// with Hearth's settings (WAL, synchronous NORMAL, statements prepared once), signing with Hearth's ID token
// algorithm and key size. The ratio to it says how much Hearth adds on top of the unavoidable.
//   --mode token        POST /api/v10/oauth2/token (authorization_code): read the code row by key, spend it
//                       and write the token row in one transaction, sign one ID token. POST /_mint {count}
//                       stores `count` fresh codes (outside the measurement) and answers them.
//   --mode provisional  POST /api/v10/partner-sdk/token/bot: read the application by its bot token's hash,
//                       find or create the player's account and identity, write the token row and sign one
//                       ID token, in one transaction.
//   --mode read         GET /api/v10/users/@me: hash the Authorization token, read the session joined with its
//                       user by the hash (one indexed lookup), and answer the user through a response schema.
//                       --token is the one session it stores.
//   --sample <JSON>     Hearth's answer, whose field names and token sizes the baseline copies.
import { createHash, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ID_TOKEN_SIGNING_ALG } from '@hearth/protocol';
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';
import { generateKeyPair, SignJWT } from 'jose';

const { values } = parseArgs({
  options: {
    mode: { type: 'string' },
    database: { type: 'string' },
    sample: { type: 'string' },
    'bot-token': { type: 'string' },
    token: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
  },
});
const { mode, database, sample } = values;
if ((mode !== 'token' && mode !== 'provisional' && mode !== 'read') || !database || !sample) {
  throw new Error('usage: minimal-work.ts --mode token|provisional|read --database PATH --sample JSON');
}
const shape = JSON.parse(sample) as Record<string, unknown>;
const tokenLength = String(shape['access_token'] ?? '').length;

const db = new SQLite(database);
db.pragma('busy_timeout = 15000');
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`
  CREATE TABLE IF NOT EXISTS codes (code TEXT PRIMARY KEY, client_id TEXT NOT NULL, user_id TEXT NOT NULL,
    scope TEXT NOT NULL, redirect_uri TEXT NOT NULL, expires_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS tokens (access_hash TEXT PRIMARY KEY, refresh_hash TEXT, user_id TEXT NOT NULL,
    client_id TEXT NOT NULL, scope TEXT NOT NULL, expires_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS applications (bot_token_hash TEXT PRIMARY KEY, id TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS identities (application_id TEXT NOT NULL, external_id TEXT NOT NULL,
    user_id TEXT NOT NULL, PRIMARY KEY (application_id, external_id));
  CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, global_name TEXT);
`);

const { privateKey } = await generateKeyPair(ID_TOKEN_SIGNING_ALG);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const token = () =>
  randomBytes(Math.ceil((tokenLength * 3) / 4))
    .toString('base64url')
    .slice(0, tokenLength);
let nextId = BigInt(Date.now()) << 22n;

function idToken(subject: string, audience: string): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: ID_TOKEN_SIGNING_ALG, kid: 'minimal', typ: 'JWT' })
    .setIssuer('http://127.0.0.1')
    .setSubject(subject)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(privateKey);
}

/** The sample's fields with fresh tokens: the same shape and, within an ID token's few bytes, the same size. */
function answer(access: string, refresh: string, id: string): Record<string, unknown> {
  return {
    ...shape,
    access_token: access,
    ...('refresh_token' in shape ? { refresh_token: refresh } : {}),
    id_token: id,
  };
}

const app = Fastify();
app.addContentTypeParser(
  'application/x-www-form-urlencoded',
  { parseAs: 'string' },
  (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  },
);

if (mode === 'token') {
  const findCode = db.prepare<
    [string],
    { client_id: string; user_id: string; scope: string; expires_at: number }
  >('SELECT client_id, user_id, scope, expires_at FROM codes WHERE code = ?');
  const spendCode = db.prepare('DELETE FROM codes WHERE code = ?');
  const addCode = db.prepare('INSERT INTO codes VALUES (?, ?, ?, ?, ?, ?)');
  const addToken = db.prepare('INSERT INTO tokens VALUES (?, ?, ?, ?, ?, ?)');
  const exchange = db.transaction((code: string, access: string, refresh: string) => {
    const row = findCode.get(code);
    if (!row || row.expires_at < Date.now()) return undefined;
    spendCode.run(code);
    addToken.run(
      sha256(access),
      sha256(refresh),
      row.user_id,
      row.client_id,
      row.scope,
      Date.now() + 604_800_000,
    );
    return row;
  });

  app.post('/_mint', async (request) => {
    const {
      count,
      length,
      client_id: clientId,
    } = request.body as { count: number; length: number; client_id: string };
    const codes = Array.from({ length: count }, () =>
      randomBytes(length).toString('base64url').slice(0, length),
    );
    db.transaction(() => {
      for (const code of codes)
        addCode.run(
          code,
          clientId,
          '1',
          'openid identify',
          'http://127.0.0.1/callback',
          Date.now() + 600_000,
        );
    })();
    return codes;
  });
  app.post('/api/v10/oauth2/token', async (request, reply) => {
    const form = request.body as Record<string, string> | undefined;
    if (form?.['grant_type'] !== 'authorization_code' || !form['code'] || !form['client_id']) {
      return reply.code(400).send({ error: 'invalid_request' });
    }
    const access = token();
    const refresh = token();
    const row = exchange(form['code'], access, refresh);
    if (!row) return reply.code(400).send({ error: 'invalid_grant' });
    const id = await idToken(row.user_id, row.client_id);
    return reply
      .headers({ 'cache-control': 'no-store', pragma: 'no-cache' })
      .send(answer(access, refresh, id));
  });
} else if (mode === 'read') {
  readRoute(values.token);
} else {
  const botToken = values['bot-token'];
  if (!botToken) throw new Error('--mode provisional needs --bot-token');
  db.prepare('INSERT OR IGNORE INTO applications VALUES (?, ?)').run(sha256(botToken), '1');
  const findApplication = db.prepare<[string], { id: string }>(
    'SELECT id FROM applications WHERE bot_token_hash = ?',
  );
  const findIdentity = db.prepare<[string, string], { user_id: string }>(
    'SELECT user_id FROM identities WHERE application_id = ? AND external_id = ?',
  );
  const addUser = db.prepare('INSERT INTO users VALUES (?, ?)');
  const addIdentity = db.prepare('INSERT INTO identities VALUES (?, ?, ?)');
  const addToken = db.prepare('INSERT INTO tokens VALUES (?, NULL, ?, ?, ?, ?)');
  const issue = db.transaction(
    (applicationId: string, externalId: string, name: string | null, access: string) => {
      let userId = findIdentity.get(applicationId, externalId)?.user_id;
      if (userId === undefined) {
        userId = String(nextId++);
        addUser.run(userId, name);
        addIdentity.run(applicationId, externalId, userId);
      }
      addToken.run(sha256(access), userId, applicationId, 'sdk.social_layer', Date.now() + 3_600_000);
      return userId;
    },
  );

  app.post('/api/v10/partner-sdk/token/bot', async (request, reply) => {
    const header = request.headers.authorization;
    const application = header?.startsWith('Bot ') ? findApplication.get(sha256(header.slice(4))) : undefined;
    if (!application) return reply.code(401).send({ message: '401: Unauthorized', code: 0 });
    const body = request.body as { external_user_id?: unknown; preferred_global_name?: unknown } | undefined;
    if (typeof body?.external_user_id !== 'string') return reply.code(400).send({ code: 50035 });
    const access = token();
    const name = typeof body.preferred_global_name === 'string' ? body.preferred_global_name : null;
    const userId = issue(application.id, body.external_user_id, name, access);
    const id = await idToken(userId, application.id);
    return reply.headers({ 'cache-control': 'no-store', pragma: 'no-cache' }).send(answer(access, '', id));
  });
}

/**
 * The sample user's fields become the columns of its row (booleans as 0/1, as SQLite stores them), and the
 * response schema their types, so the row is read and serialized field by field as a server must.
 */
function readRoute(sessionToken: string | undefined): void {
  if (!sessionToken) throw new Error('--mode read needs --token');
  const fields = Object.keys(shape);
  const columns = fields.map((field) => `"${field}"`).join(', ');
  db.exec(`CREATE TABLE IF NOT EXISTS profiles (${fields.map((f) => `"${f}"`).join(', ')});
    CREATE TABLE IF NOT EXISTS sessions (token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL,
      expires_at INTEGER NOT NULL);
    CREATE UNIQUE INDEX IF NOT EXISTS profiles_id ON profiles (id);`);
  const stored = fields.map((field) => {
    const value = shape[field];
    if (typeof value === 'boolean') return value ? 1 : 0;
    return value !== null && typeof value === 'object' ? JSON.stringify(value) : value;
  });
  db.prepare(`INSERT OR REPLACE INTO profiles (${columns}) VALUES (${fields.map(() => '?').join(', ')})`).run(
    ...stored,
  );
  db.prepare('INSERT OR REPLACE INTO sessions VALUES (?, ?, ?)').run(
    sha256(sessionToken),
    shape['id'],
    Date.now() + 86_400_000,
  );
  const find = db.prepare<[string, number], Record<string, unknown>>(
    `SELECT ${fields.map((f) => `p."${f}"`).join(', ')} FROM sessions s JOIN profiles p ON p.id = s.user_id
     WHERE s.token_hash = ? AND s.expires_at > ?`,
  );
  const properties = Object.fromEntries(
    fields.map((field) => {
      const value = shape[field];
      const type =
        value === null
          ? 'null'
          : typeof value === 'object'
            ? 'object'
            : (typeof value as 'string' | 'number');
      return [field, type === 'null' ? { type: ['string', 'null'] } : { type }];
    }),
  );
  const booleans = fields.filter((field) => typeof shape[field] === 'boolean');
  app.get(
    '/api/v10/users/@me',
    {
      schema: {
        response: {
          200: { type: 'object', properties },
          401: { type: 'object', properties: { message: { type: 'string' }, code: { type: 'number' } } },
        },
      },
    },
    async (request, reply) => {
      const header = request.headers.authorization;
      const row = header ? find.get(sha256(header), Date.now()) : undefined;
      if (!row) return reply.code(401).send({ message: '401: Unauthorized', code: 0 });
      for (const field of booleans) row[field] = row[field] === 1;
      return row;
    },
  );
}

await app.listen({ host: values.host, port: 0 });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
process.stdout.write(`minimal-work listening on http://${values.host}:${port}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    app.close().then(
      () => {
        db.close();
        process.exit(0);
      },
      () => process.exit(1),
    );
  });
}

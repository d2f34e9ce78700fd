import { generateKeyPairSync } from 'node:crypto';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import { generateSecret, generateToken, hashToken } from '../../kernel/secrets.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Storage } from '../../storage/database.js';
import type { AccountsService, User } from '../accounts/service.js';
import { NewApplication } from './schemas.js';
import * as store from './store.js';

export interface Application {
  id: string;
  name: string;
  description: string;
  ownerId: string | null;
  botUserId: string;
  publicClient: boolean;
  redirectUris: string[];
  flags: number;
  /** Ed25519 public key of the application's signed events, hex (PROTOCOL.md §F.2). */
  verifyKey: string;
  createdAt: number;
}

export interface CreatedApplication {
  application: Application;
  botUser: User;
  /** Shown once; only hashes are stored. */
  clientSecret: string;
  botToken: string;
}

export interface ApplicationsDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  accounts: AccountsService;
}

/** Applications (games), their credentials and their bot users. */
export class ApplicationsService {
  readonly #deps: ApplicationsDeps;

  constructor(deps: ApplicationsDeps) {
    this.#deps = deps;
  }

  async createApplication(input: unknown): Promise<CreatedApplication> {
    const { name, redirect_uris = [], public_client = false, owner_id = null } = parse(NewApplication, input);
    const { storage, clock, snowflakes, accounts } = this.#deps;
    const id = snowflakes.next();
    const clientSecret = generateSecret(24);
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const verifyKey = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
    const signingKey = privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
    if (owner_id !== null && !(await accounts.getUser(owner_id))) throw new HearthError('UnknownUser');
    return storage.transaction(async (tx) => {
      const botUser = await accounts.createBotUser(tx, name);
      const botToken = generateToken(botUser.id, clock.now());
      const row = {
        id,
        name,
        owner_id,
        bot_user_id: botUser.id,
        bot_token_hash: hashToken(botToken),
        client_secret_hash: hashToken(clientSecret),
        public_client: public_client ? 1 : 0,
        redirect_uris: JSON.stringify(redirect_uris),
        flags: 0,
        verify_key: verifyKey,
        signing_key: signingKey,
        created_at: clock.now(),
      };
      await store.insertApplication(tx, row);
      return { application: toApplication({ ...row, description: '' }), botUser, clientSecret, botToken };
    });
  }

  /** The application whose bot token this is, or undefined. */
  async authenticateBot(token: string): Promise<Application | undefined> {
    const row = await store.findApplicationByBotToken(this.#deps.storage.db, hashToken(token));
    return row && toApplication(row);
  }

  async getApplication(id: string): Promise<Application | undefined> {
    const row = await store.findApplicationById(this.#deps.storage.db, id);
    return row && toApplication(row);
  }
}

function toApplication(row: store.ApplicationRow): Application {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    ownerId: row.owner_id,
    botUserId: row.bot_user_id,
    publicClient: row.public_client === 1,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    flags: Number(row.flags),
    verifyKey: row.verify_key,
    createdAt: Number(row.created_at),
  };
}

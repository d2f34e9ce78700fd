import { base64url, randomBytes, sha256 } from './sha256.js';

/**
 * How the C++ idioms of the spec map to TypeScript (seed, AuthorizationArgs rules 7–8):
 *
 * | C++                               | TypeScript                                              |
 * |-----------------------------------|---------------------------------------------------------|
 * | `AuthorizationArgs b(a)` (copy)   | `new AuthorizationArgs(a)`: a deep, independent copy     |
 * | `b = a` (copy assignment)         | `b.Assign(a)`                                            |
 * | `AuthorizationArgs b(std::move(a))` | `AuthorizationArgs.Move(a)`: `a` is left uninitialized |
 * | `b = std::move(a)`                | `b.MoveAssign(a)`                                        |
 * | `operator bool`                   | `args.IsValid()` (a JS object is always truthy)          |
 * | `AuthorizationArgs::nullobj`      | `AuthorizationArgs.nullobj`: uninitialized, IsValid() false |
 * | `uint64_t`                        | `bigint`                                                 |
 * | `std::optional<T>`                | `T \| undefined`                                         |
 *
 * Using an uninitialized instance (nullobj, or one moved from) throws {@link UninitializedInstanceError}.
 */
export class UninitializedInstanceError extends Error {
  constructor(type: string) {
    super(`${type} is uninitialized (nullobj or moved from): it holds no value to read or set`);
    this.name = 'UninitializedInstanceError';
  }
}

/** Installation context in which the app is installed (seed: IntegrationType). */
export const IntegrationType = { GuildInstall: 0, UserInstall: 1 } as const;
export type IntegrationType = (typeof IntegrationType)[keyof typeof IntegrationType];

/** The kind of token the library holds (Client::UpdateToken). */
export const AuthorizationTokenType = { User: 0, Bearer: 1 } as const;
export type AuthorizationTokenType = (typeof AuthorizationTokenType)[keyof typeof AuthorizationTokenType];

const UINT64_MAX = (1n << 64n) - 1n;

/** A uint64_t from a bigint or a decimal string (snowflakes travel as strings in JSON). */
export function toUint64(value: bigint | string, name: string): bigint {
  const n = typeof value === 'bigint' ? value : /^\d{1,20}$/.test(value) ? BigInt(value) : -1n;
  if (n < 0n || n > UINT64_MAX) throw new RangeError(`${name} must be an unsigned 64-bit integer`);
  return n;
}

interface ChallengeFields {
  challenge: string;
  method: string;
}

/** A PKCE code challenge (RFC 7636): `challenge` and its `method` (S256). */
export class AuthorizationCodeChallenge {
  static readonly nullobj: AuthorizationCodeChallenge = new AuthorizationCodeChallenge(null);
  #fields: ChallengeFields | null;

  constructor(from?: AuthorizationCodeChallenge | null) {
    this.#fields = from === null ? null : from ? { ...from.#read() } : { challenge: '', method: 'S256' };
  }

  get challenge(): string {
    return this.#read().challenge;
  }

  get method(): string {
    return this.#read().method;
  }

  Challenge(): string {
    return this.#read().challenge;
  }

  SetChallenge(challenge: string): void {
    if (this === AuthorizationCodeChallenge.nullobj)
      throw new UninitializedInstanceError('AuthorizationCodeChallenge');
    this.#read().challenge = challenge;
  }

  Method(): string {
    return this.#read().method;
  }

  SetMethod(method: string): void {
    this.#read().method = method;
  }

  IsValid(): boolean {
    return this.#fields !== null;
  }

  #read(): ChallengeFields {
    if (!this.#fields) throw new UninitializedInstanceError('AuthorizationCodeChallenge');
    return this.#fields;
  }
}

/** A PKCE verifier and its challenge, made by Client::CreateAuthorizationCodeVerifier. */
export class AuthorizationCodeVerifier {
  readonly #challenge: AuthorizationCodeChallenge;
  readonly #verifier: string;

  /** A fresh RFC 7636 pair: 32 random bytes as the verifier (43 characters), its S256 challenge. */
  static Create(): AuthorizationCodeVerifier {
    const verifier = base64url(randomBytes(32));
    const challenge = new AuthorizationCodeChallenge();
    challenge.SetChallenge(base64url(sha256(new TextEncoder().encode(verifier))));
    challenge.SetMethod('S256');
    return new AuthorizationCodeVerifier(challenge, verifier);
  }

  private constructor(challenge: AuthorizationCodeChallenge, verifier: string) {
    this.#challenge = challenge;
    this.#verifier = verifier;
  }

  /** The challenge to pass to AuthorizationArgs::SetCodeChallenge (a copy: the pair stays intact). */
  Challenge(): AuthorizationCodeChallenge {
    return new AuthorizationCodeChallenge(this.#challenge);
  }

  /** The verifier to pass to Client::GetToken. */
  Verifier(): string {
    return this.#verifier;
  }
}

interface ArgsFields {
  clientId: bigint;
  scopes: string;
  state: string | undefined;
  nonce: string | undefined;
  codeChallenge: AuthorizationCodeChallenge | undefined;
  integrationType: IntegrationType | undefined;
  customSchemeParam: string | undefined;
}

/**
 * The arguments of Client::Authorize (seed: Resources, AuthorizationArgs). Each field has an accessor named
 * like the field and a setter `Set<Field>`. See the table above for the C++ idioms.
 */
export class AuthorizationArgs {
  /** An uninitialized instance: `IsValid()` is false and every accessor throws. */
  static readonly nullobj: AuthorizationArgs = new AuthorizationArgs(null);

  #fields: ArgsFields | null;

  /** A new instance with every default, or a deep copy of `other` (copy construction). */
  constructor(other?: AuthorizationArgs | null) {
    if (other === null) {
      this.#fields = null;
    } else if (other) {
      this.#fields = copyFields(other.#read());
    } else {
      this.#fields = {
        clientId: 0n,
        scopes: '',
        state: undefined,
        nonce: undefined,
        codeChallenge: undefined,
        integrationType: undefined,
        customSchemeParam: undefined,
      };
    }
  }

  /** Move construction: the new instance takes `other`'s values; `other` is left uninitialized. */
  static Move(other: AuthorizationArgs): AuthorizationArgs {
    const moved = new AuthorizationArgs(null);
    moved.#fields = other.#read();
    other.#fields = null;
    return moved;
  }

  /** Copy assignment: this instance becomes a deep, independent copy of `other`. */
  Assign(other: AuthorizationArgs): this {
    if (other !== this) this.#write(copyFields(other.#read()));
    return this;
  }

  /** Move assignment: this instance takes `other`'s values; `other` is left uninitialized. */
  MoveAssign(other: AuthorizationArgs): this {
    if (other === this) return this;
    this.#write(other.#read());
    other.#fields = null;
    return this;
  }

  /** `operator bool`: true when this instance holds a valid object (rule 7). */
  IsValid(): boolean {
    return this.#fields !== null;
  }

  /** Application id of the game; 0 means "the value of Client::SetApplicationId". */
  ClientId(): bigint {
    return this.#read().clientId;
  }

  SetClientId(clientId: bigint | string): void {
    this.#read().clientId = toUint64(clientId, 'ClientId');
  }

  /** Space-separated OAuth2 scopes; required (rules 1–3). */
  Scopes(): string {
    return this.#read().scopes;
  }

  SetScopes(scopes: string): void {
    this.#read().scopes = scopes;
  }

  /** The OAuth2 `state`; when unset the library generates a secure random value (recommended). */
  State(): string | undefined {
    return this.#read().state;
  }

  SetState(state: string | undefined): void {
    this.#read().state = state;
  }

  /** OpenID Connect nonce, for backends that use ID tokens. */
  Nonce(): string | undefined {
    return this.#read().nonce;
  }

  SetNonce(nonce: string | undefined): void {
    this.#read().nonce = nonce;
  }

  /** The PKCE challenge for the Client::GetToken flow. */
  CodeChallenge(): AuthorizationCodeChallenge | undefined {
    const challenge = this.#read().codeChallenge;
    return challenge && new AuthorizationCodeChallenge(challenge);
  }

  SetCodeChallenge(codeChallenge: AuthorizationCodeChallenge | undefined): void {
    this.#read().codeChallenge = codeChallenge && new AuthorizationCodeChallenge(codeChallenge);
  }

  IntegrationType(): IntegrationType | undefined {
    return this.#read().integrationType;
  }

  SetIntegrationType(integrationType: IntegrationType | undefined): void {
    if (integrationType !== undefined && !Object.values(IntegrationType).includes(integrationType)) {
      throw new RangeError(
        'IntegrationType must be IntegrationType.GuildInstall or IntegrationType.UserInstall',
      );
    }
    this.#read().integrationType = integrationType;
  }

  /** A custom URI scheme for mobile redirects: the redirect becomes `<scheme>:/authorize/callback` (rule 4). */
  CustomSchemeParam(): string | undefined {
    return this.#read().customSchemeParam;
  }

  SetCustomSchemeParam(customSchemeParam: string | undefined): void {
    this.#read().customSchemeParam = customSchemeParam;
  }

  #read(): ArgsFields {
    if (!this.#fields) throw new UninitializedInstanceError('AuthorizationArgs');
    return this.#fields;
  }

  #write(fields: ArgsFields): void {
    // nullobj stays uninitialized forever: it is shared by every caller.
    if (this === AuthorizationArgs.nullobj) throw new UninitializedInstanceError('AuthorizationArgs.nullobj');
    this.#fields = fields;
  }
}

function copyFields(fields: ArgsFields): ArgsFields {
  return {
    ...fields,
    codeChallenge: fields.codeChallenge && new AuthorizationCodeChallenge(fields.codeChallenge),
  };
}

/**
 * Account linking with the Hearth client library: authorize a player with PKCE, exchange the code, call the
 * API as the player, refresh once, and revoke.
 *
 *   npm start                                      # the platform on http://127.0.0.1:8080
 *   npx hearth apps create --name "My Game" --redirect-uri http://127.0.0.1/callback --public --json
 *   npx hearth users create --username alice --email alice@example.com --password 'correct horse' --json
 *   HEARTH_APP_ID=<id> npx tsx examples/authorize.ts
 *
 * Settings (environment):
 *   HEARTH_URL             the server, default http://127.0.0.1:8080
 *   HEARTH_APP_ID          the application id printed by `hearth apps create` (required)
 *   HEARTH_EXAMPLE_OPENER  `print` prints the sign-in address instead of opening the system browser
 */
import { sdkpp } from '@hearth/sdk';

const webBase = (process.env['HEARTH_URL'] ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const appId = process.env['HEARTH_APP_ID'];
if (!appId) {
  console.error('Set HEARTH_APP_ID to the id printed by `npx hearth apps create … --public --json`.');
  process.exit(2);
}

/** Stops with the library's description of what went wrong. */
function check(step: string, result: sdkpp.ClientResult): void {
  if (result.Successful()) return;
  console.error(`${step} failed: ${result.ToString()}`);
  process.exit(1);
}

// Without an opener the client opens the system browser (or prints the address when it cannot).
const printOpener = (url: string) => {
  console.log(`Open this address to sign in:\n${url}`);
};
const client = new sdkpp.Client(
  `${webBase}/api`,
  webBase,
  process.env['HEARTH_EXAMPLE_OPENER'] === 'print' ? { opener: printOpener } : {},
);
client.SetApplicationId(appId);

// 1. Authorize: the player signs in and consents in the browser; the library listens on a loopback port
//    for the redirect and checks the state it generated.
const verifier = client.CreateAuthorizationCodeVerifier();
const args = new sdkpp.AuthorizationArgs();
args.SetScopes(sdkpp.Client.GetDefaultCommunicationScopes());
args.SetCodeChallenge(verifier.Challenge());
console.log(`1. Authorizing application ${appId} at ${webBase} (scopes: ${args.Scopes()})…`);
const authorized = await client.Authorize(args);
check('Authorize', authorized.result);
console.log(`   authorized; the player came back to ${authorized.redirectUri}`);

// 2. Exchange the code and the PKCE verifier for tokens (a public client sends no secret).
const tokens = await client.GetToken(appId, authorized.code, verifier.Verifier(), authorized.redirectUri);
check('GetToken', tokens.result);
console.log(`2. Got tokens: scopes "${tokens.scopes}", expire in ${tokens.expiresIn} s`);

// 3. Call the API as the player.
const response = await fetch(`${webBase}/api/v10/users/@me`, {
  headers: { authorization: `Bearer ${tokens.accessToken}` },
});
if (!response.ok) {
  console.error(`GET /users/@me failed: ${response.status} ${await response.text()}`);
  process.exit(1);
}
const me = (await response.json()) as { id: string; username: string; global_name: string | null };
console.log(`3. Signed in as ${me.global_name ?? me.username} (id ${me.id})`);

// 4. Refresh: the old refresh token is spent; keep the new pair. `invalid_grant` here would mean the
//    player unlinked the game.
const refreshed = await client.RefreshToken(appId, tokens.refreshToken);
check('RefreshToken', refreshed.result);
console.log(`4. Refreshed: a new pair, expires in ${refreshed.expiresIn} s`);

// 5. Revoke: every token of this game for this player ends.
check('RevokeToken', await client.RevokeToken(appId, refreshed.accessToken));
const after = await fetch(`${webBase}/api/v10/users/@me`, {
  headers: { authorization: `Bearer ${refreshed.accessToken}` },
});
console.log(`5. Revoked: the token now gets HTTP ${after.status}`);

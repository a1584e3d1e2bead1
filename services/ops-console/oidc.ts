import * as client from 'openid-client';
import { z } from 'zod';
import type { Clock } from '../../libs/core/clock.js';
import type { OidcConfig } from './config.js';
import { consoleRoles } from './roles.js';
import type { ProviderTokens, Refreshed, SignedInIdentity } from './session.js';
import { SignInRefused } from './sign-in.js';

/** How long a started sign-in may take at the provider before its callback is refused. */
export const PENDING_SIGN_IN_TTL_MS = 10 * 60_000;

/** Network timeout of each request to the provider, seconds. */
const PROVIDER_TIMEOUT_SEC = 10;

/**
 * A sign-in started at the provider and not yet finished: what its callback is checked against.
 * Kept on the server (never in the browser) under a random id the browser holds in a short cookie.
 */
export interface PendingSignIn {
  readonly state: string;
  readonly nonce: string;
  /** The PKCE code verifier (S256); a secret until the code is redeemed. */
  readonly codeVerifier: string;
  /** A same-origin path to return to after sign-in. */
  readonly returnTo: string;
}

const PendingSchema = z.strictObject({
  state: z.string().min(1),
  nonce: z.string().min(1),
  codeVerifier: z.string().min(43),
  returnTo: z.string().min(1),
});

/** A pending sign-in as stored text, or undefined when it is not one. */
export function parsePendingSignIn(text: string | undefined): PendingSignIn | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = PendingSchema.safeParse(JSON.parse(text));
    return parsed.success && isReturnPath(parsed.data.returnTo) ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether `path` is a safe place to return to after sign-in: a path on this console (starts with
 * one `/`, no `//` or `/\` that a browser would read as another host, no scheme, no control
 * characters, at most 2000 characters). Anything else is replaced by `/cases`: no open redirect.
 */
export function isReturnPath(path: string): boolean {
  return (
    path.length <= 2000 &&
    path.startsWith('/') &&
    !path.startsWith('//') &&
    !path.startsWith('/\\') &&
    // eslint-disable-next-line no-control-regex -- control characters are what is refused
    !/[\u0000-\u001f\u007f\\]/.test(path)
  );
}

/** `path` when it {@link isReturnPath}, else `/cases`. */
export function returnPathOr(path: string | null | undefined): string {
  return path !== null && path !== undefined && isReturnPath(path) ? path : '/cases';
}

/**
 * Sign-in through an OpenID Connect provider with openid-client: authorization code flow with
 * PKCE (S256), state and nonce, the client authenticated with its secret. The provider's metadata
 * is discovered on first use (and again after a failed discovery, so a console started before its
 * provider recovers). Identity comes from the verified ID token: the operator from the configured
 * claim, console roles from the roles claim (other values ignored), tenants from the tenants claim
 * (`*` = all; absent = none). A refresh re-reads them from the refreshed ID token, or from userinfo
 * when the provider sends none.
 */
export class OidcSignIn {
  readonly #config: OidcConfig;
  readonly #clock: Clock;
  #discovered: Promise<client.Configuration> | undefined;

  constructor(config: OidcConfig, clock: Clock) {
    this.#config = config;
    this.#clock = clock;
    this.issuerOrigin = new URL(config.issuer).origin;
  }

  /** The provider's origin (scheme://host:port): the console's pages allow form redirects to it. */
  readonly issuerOrigin: string;

  /** Starts a sign-in: the provider URL to send the browser to, and what its callback must match. */
  async begin(returnTo: string): Promise<{ readonly url: string; readonly pending: PendingSignIn }> {
    const config = await this.#configuration();
    const pending: PendingSignIn = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      codeVerifier: client.randomPKCECodeVerifier(),
      returnTo: returnPathOr(returnTo),
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.#config.redirectUri,
      scope: this.#config.scopes.join(' '),
      response_type: 'code',
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, pending };
  }

  /**
   * Finishes a sign-in from the callback URL the provider sent the browser to: checks state,
   * redeems the code with the PKCE verifier, verifies the ID token (signature, issuer, audience,
   * nonce, times). Rejects with {@link SignInRefused} saying why (never echoing a token).
   */
  async finish(callbackUrl: URL, pending: PendingSignIn): Promise<Refreshed> {
    const error = callbackUrl.searchParams.get('error');
    if (error !== null) {
      throw new SignInRefused(`The identity provider did not sign you in (${error.slice(0, 100)}).`);
    }
    const config = await this.#configuration();
    let tokens;
    try {
      tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        pkceCodeVerifier: pending.codeVerifier,
        idTokenExpected: true,
      });
    } catch (err) {
      throw new SignInRefused(`The sign-in could not be completed: ${providerError(err)}.`);
    }
    return this.#read(config, tokens);
  }

  /** Re-reads the operator with `refreshToken`; rejects when the provider refuses. */
  async refresh(refreshToken: string): Promise<Refreshed> {
    const config = await this.#configuration();
    const tokens = await client.refreshTokenGrant(config, refreshToken);
    return this.#read(config, tokens, refreshToken);
  }

  /**
   * The provider's sign-out URL for a session signed in with `idToken`, returning to
   * `postLogoutRedirectUri`; undefined when the provider has no end-session endpoint.
   */
  async endSessionUrl(
    idToken: string | undefined,
    postLogoutRedirectUri: string,
  ): Promise<string | undefined> {
    const config = await this.#configuration();
    const endpoint = config.serverMetadata().end_session_endpoint;
    // Only on the issuer's origin: the pages' form-action allows no other.
    if (endpoint === undefined || new URL(endpoint).origin !== this.issuerOrigin) return undefined;
    return client.buildEndSessionUrl(config, {
      post_logout_redirect_uri: postLogoutRedirectUri,
      ...(idToken === undefined ? { client_id: this.#config.clientId } : { id_token_hint: idToken }),
    }).href;
  }

  async #read(
    config: client.Configuration,
    tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers,
    previousRefreshToken?: string,
  ): Promise<Refreshed> {
    const refreshToken = tokens.refresh_token ?? previousRefreshToken;
    if (refreshToken === undefined)
      throw new SignInRefused('The identity provider issued no refresh token; the console needs one.');
    let claims: Record<string, unknown> | undefined = tokens.claims();
    if (claims === undefined) {
      claims = await client.fetchUserInfo(config, tokens.access_token, client.skipSubjectCheck);
    }
    const provider: ProviderTokens = {
      refreshToken,
      accessExpiresAtMs: this.#clock.now() + (tokens.expiresIn() ?? 60) * 1000,
      idToken: tokens.id_token,
    };
    return { identity: this.#identity(claims), tokens: provider };
  }

  #identity(claims: Record<string, unknown>): SignedInIdentity {
    const names = this.#config.claims;
    const operator = claims[names.operator];
    if (typeof operator !== 'string' || !/^[A-Za-z0-9._@-]{1,200}$/.test(operator)) {
      throw new SignInRefused(
        `The identity provider's token has no usable operator name (claim ${names.operator}).`,
      );
    }
    const roles = consoleRoles(stringList(claims[names.roles]));
    if (roles.length === 0) {
      throw new SignInRefused(
        `The identity provider gives ${operator} none of the console roles (viewer, operator, approver) in claim ${names.roles}.`,
      );
    }
    return { operator, roles, tenants: stringList(claims[names.tenants]) };
  }

  #configuration(): Promise<client.Configuration> {
    this.#discovered ??= (async () => {
      const issuer = new URL(this.#config.issuer);
      return client.discovery(
        issuer,
        this.#config.clientId,
        undefined,
        client.ClientSecretPost(this.#config.clientSecret),
        {
          timeout: PROVIDER_TIMEOUT_SEC,
          // Plain http is accepted by the configuration only for a provider on a loopback host.
          ...(issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {}),
        },
      );
    })();
    const discovered = this.#discovered;
    discovered.catch(() => {
      if (this.#discovered === discovered) this.#discovered = undefined;
    });
    return discovered;
  }
}

/** A claim that lists names: an array of strings, or one string (kept as a one-element list). */
function stringList(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/** The provider's error code and description, or the error's message; never a token. */
function providerError(err: unknown): string {
  if (err instanceof client.ResponseBodyError)
    return `${err.error}${err.error_description ? `: ${err.error_description}` : ''}`;
  return err instanceof Error ? err.message.slice(0, 200) : 'unknown error';
}

import { z } from 'zod';
import { ToolgateError } from '../core/errors.js';
import { attemptScope, raceAbort } from '../execution/attempt-scope.js';
import type { Clock } from '../core/clock.js';
import { errorForStatus, errorForTransport, HttpStatusError } from './http-error.js';
import { silentLogger, type Logger } from '../ports/logger.js';
import { clientCredentialNames, type SecretsSource } from './secrets-source.js';
import type { TokenProvider } from './token-provider.js';

/** Options of {@link createClientCredentialsProvider}. */
export interface ClientCredentialsOptions {
  /** The OAuth 2.0 token endpoint (RFC 6749 §4.4, client credentials grant). */
  readonly tokenUrl: string;
  /** Per-tenant client id and secret, under {@link clientCredentialNames}. */
  readonly secrets: SecretsSource;
  readonly clock: Clock;
  readonly logger?: Logger;
  /**
   * Refresh this long before expiry (default 60 000 ms), capped at half the token's lifetime so a
   * short-lived token is not refreshed on every call.
   */
  readonly refreshBeforeExpiryMs?: number;
  /** Limit on one token request. Default 5 000 ms. */
  readonly timeoutMs?: number;
  /** Default: global fetch. */
  readonly fetch?: typeof fetch;
}

const tokenResponse = z.object({
  access_token: z.string().min(1),
  token_type: z.string().regex(/^bearer$/i),
  expires_in: z.number().positive(),
});

interface Cached {
  readonly token: string;
  readonly expiresAtMs: number;
  readonly refreshAtMs: number;
}

/**
 * A {@link TokenProvider} using the OAuth client credentials grant, with the tenant's own client id
 * and secret read from `secrets` on every fetch (so a rotated secret is used at the next refresh).
 *
 * - Tokens are cached per (tenant, audience) and reused until `refreshAtMs` (expiry minus the
 *   refresh margin); then the next caller fetches a new one. If that refresh fails while the cached
 *   token is still valid, the cached one is returned and a warning logged: a token endpoint blip
 *   does not fail calls that could still succeed.
 * - Concurrent fetches for one key are merged (single flight).
 * - The client secret is sent only in the `Authorization: Basic` header of the token request; the
 *   secret and the tokens are never logged, put in an error message or kept outside the cache.
 *   Errors: no credentials for the tenant → INTERNAL (not retryable: configuration); the endpoint
 *   refuses them (400/401/403) → CALLER_ERROR, not retryable; 5xx / unreachable / timeout → per
 *   the REST mapping (SERVER_ERROR / TIMEOUT); a malformed answer → SERVER_ERROR.
 */
export function createClientCredentialsProvider(options: ClientCredentialsOptions): TokenProvider {
  const logger = options.logger ?? silentLogger;
  const doFetch = options.fetch ?? fetch;
  const margin = options.refreshBeforeExpiryMs ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const cache = new Map<string, Cached>();
  const inflight = new Map<string, Promise<Cached>>();
  const keyOf = (tenant: string, audience: string): string => `${tenant}\u0000${audience}`;

  const fetchToken = async (tenant: string, audience: string, signal?: AbortSignal): Promise<Cached> => {
    const names = clientCredentialNames(tenant, audience);
    const [clientId, clientSecret] = await Promise.all([
      options.secrets.get(names.clientId),
      options.secrets.get(names.clientSecret),
    ]);
    if (clientId === undefined || clientSecret === undefined) {
      throw new ToolgateError('INTERNAL', `The ${audience} integration is not configured for this tenant.`, {
        retryable: false,
      });
    }
    const basic = Buffer.from(
      `${encodeURIComponent(clientId.reveal())}:${encodeURIComponent(clientSecret.reveal())}`,
    ).toString('base64');
    const scope = attemptScope(signal ?? new AbortController().signal, timeoutMs, undefined, options.clock);
    const startedAt = options.clock.now();
    let response: Response;
    let body: unknown;
    try {
      response = await doFetch(options.tokenUrl, {
        method: 'POST',
        headers: {
          authorization: `Basic ${basic}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', audience }).toString(),
        signal: scope.signal,
      });
      // Read the body even on errors so the connection is reusable; it is never logged or kept.
      body = await response.json().catch(() => undefined);
    } catch (err) {
      const error = errorForTransport(err, options.clock.now());
      logger.warn({ tenant, audience, code: error.code }, 'token request failed');
      throw error;
    } finally {
      scope.dispose();
    }
    if (!response.ok) {
      const status = new HttpStatusError('token endpoint', response.status, response.headers);
      logger.warn({ tenant, audience, status: response.status }, 'token request refused');
      if (response.status === 400 || response.status === 401 || response.status === 403) {
        throw new ToolgateError(
          'CALLER_ERROR',
          `The ${audience} integration refused toolgate's credentials.`,
          {
            retryable: false,
            cause: status,
          },
        );
      }
      throw errorForStatus(status, options.clock.now());
    }
    const parsed = tokenResponse.safeParse(body);
    if (!parsed.success) {
      logger.warn({ tenant, audience }, 'token endpoint answered in an unexpected format');
      throw new ToolgateError(
        'SERVER_ERROR',
        `The ${audience} sign-in service answered in an unexpected format.`,
      );
    }
    const now = options.clock.now();
    const lifetimeMs = parsed.data.expires_in * 1000;
    const expiresAtMs = now + lifetimeMs;
    logger.debug({ tenant, audience, expiresInMs: lifetimeMs, durationMs: now - startedAt }, 'token fetched');
    return {
      token: parsed.data.access_token,
      expiresAtMs,
      refreshAtMs: expiresAtMs - Math.min(margin, lifetimeMs / 2),
    };
  };

  const refresh = (tenant: string, audience: string, signal?: AbortSignal): Promise<Cached> => {
    const key = keyOf(tenant, audience);
    let pending = inflight.get(key);
    if (pending === undefined) {
      // The shared fetch is not tied to the first caller's signal: a caller giving up must not fail
      // the others waiting on it. Each caller still stops waiting on its own signal.
      pending = fetchToken(tenant, audience)
        .then((fresh) => {
          cache.set(key, fresh);
          return fresh;
        })
        .finally(() => inflight.delete(key));
      inflight.set(key, pending);
    }
    return signal === undefined ? pending : raceAbort(pending, signal);
  };

  return {
    async getToken(tenant, audience, signal) {
      const key = keyOf(tenant, audience);
      const cached = cache.get(key);
      const now = options.clock.now();
      if (cached !== undefined && now < cached.refreshAtMs) return cached.token;
      try {
        return (await refresh(tenant, audience, signal)).token;
      } catch (err) {
        const stillValid = cache.get(key);
        if (stillValid !== undefined && options.clock.now() < stillValid.expiresAtMs && !signal?.aborted) {
          logger.warn({ tenant, audience }, 'token refresh failed; using the cached token until it expires');
          return stillValid.token;
        }
        throw err;
      }
    },
    invalidate(tenant, audience, token) {
      const key = keyOf(tenant, audience);
      if (cache.get(key)?.token === token) cache.delete(key);
    },
  };
}

import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { z } from 'zod';
import type { Clock } from '../../libs/core/clock.js';
import type { SessionStore } from '../../libs/ports/session-store.js';
import { CONSOLE_ROLES, type ConsoleRole } from './roles.js';

/** The session cookie's name; `__Host-` where the console is served over https (no Domain, Path /). */
export function sessionCookieName(secure: boolean): string {
  return secure ? '__Host-tg_ops_session' : 'tg_ops_session';
}

/** How an operator proved who they are. */
export type SignInVia = 'oidc' | 'token' | 'dev';

/** A signed-in operator, as a request sees them. */
export interface OperatorSession {
  /** The operator's id (e.g. `ann`); actions are by `operator:<id>`. */
  readonly operator: string;
  readonly roles: readonly ConsoleRole[];
  /** The tenants they act in, in claim form: `['*']` = all (see libs/core/tenant-scope.ts). */
  readonly tenants: readonly string[];
  /** The identity provider's sign-in, a bearer or pasted token, or the development login. */
  readonly via: SignInVia;
  /** The session id (the cookie's value; random per sign-in); the CSRF token is derived from it. */
  readonly sid: string;
  /** When the session ends at the latest, epoch seconds. */
  readonly exp: number;
}

/** Who signed in, as the identity provider (or the development login) says. */
export interface SignedInIdentity {
  readonly operator: string;
  readonly roles: readonly ConsoleRole[];
  readonly tenants: readonly string[];
}

/** The identity provider's tokens a session keeps to re-read roles and tenants. */
export interface ProviderTokens {
  /** A secret: sealed in the record, never logged or shown. */
  readonly refreshToken: string;
  /** When the access token expires (epoch ms, the console's clock): the next request then refreshes. */
  readonly accessExpiresAtMs: number;
  /** For the provider's sign-out (`id_token_hint`). */
  readonly idToken?: string | undefined;
}

/** What a refresh at the identity provider gives: who the operator is now, and new tokens. */
export interface Refreshed {
  readonly identity: SignedInIdentity;
  readonly tokens: ProviderTokens;
}

/**
 * Re-reads an operator at the identity provider with a refresh token. Rejects when the provider
 * refuses (token revoked or expired, user disabled) or cannot be reached: the session then ends.
 */
export type RefreshAtProvider = (refreshToken: string) => Promise<Refreshed>;

/** The session record as stored (JSON). */
const RecordSchema = z.strictObject({
  operator: z.string().min(1).max(200),
  roles: z.array(z.enum(CONSOLE_ROLES)),
  tenants: z.array(z.string().max(200)).max(1000),
  via: z.enum(['oidc', 'token', 'dev']),
  createdAtMs: z.number().int(),
  lastSeenAtMs: z.number().int(),
  expiresAtMs: z.number().int(),
  provider: z
    .strictObject({
      sealedRefreshToken: z.string(),
      accessExpiresAtMs: z.number().int(),
      idToken: z.string().optional(),
    })
    .optional(),
});
type SessionRecord = z.infer<typeof RecordSchema>;

/** The shape of a session id: 32 random bytes, base64url. Anything else is refused unread. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** Options of {@link OperatorSessions}. */
export interface OperatorSessionsOptions {
  /** Where records live (Redis in a deployment: every replica sees every session). */
  readonly store: SessionStore;
  /** At least 32 bytes: keys CSRF tokens and seals refresh tokens. */
  readonly secret: Buffer;
  readonly clock: Clock;
  /** A session unused for this long ends. */
  readonly idleMs: number;
  /** A session ends this long after sign-in, used or not. */
  readonly lifetimeMs: number;
  /** Re-reads a provider sign-in when its access token expired; absent: no provider sign-ins. */
  readonly refresh?: RefreshAtProvider | undefined;
  /** Told when a refresh fails (the session ends); never given the token. */
  readonly onRefreshFailed?: (operator: string, err: unknown) => void;
}

/**
 * Server-side operator sessions. The cookie carries only a random id; the record (operator, roles,
 * tenants, how they signed in, times, the provider's refresh token sealed with AES-256-GCM) is in
 * the store. A request's session is {@link OperatorSessions.resume}d: it ends when idle longer than
 * the idle timeout or older than the lifetime (both by the injected clock), and a provider sign-in
 * whose access token expired is refreshed at the provider first — its roles and tenants are then
 * what the provider says now, and a refused refresh ends the session. Sign-out deletes the record,
 * so a copied cookie is worth nothing afterwards. The CSRF token is `hmac("csrf:" + id)`.
 */
export class OperatorSessions {
  readonly #store: SessionStore;
  readonly #macKey: Buffer;
  readonly #sealKey: Buffer;
  readonly #clock: Clock;
  readonly #idleMs: number;
  readonly #lifetimeMs: number;
  readonly #refresh: RefreshAtProvider | undefined;
  readonly #onRefreshFailed: (operator: string, err: unknown) => void;

  constructor(options: OperatorSessionsOptions) {
    if (options.secret.length < 32) throw new RangeError('a session secret needs at least 32 bytes');
    if (!(options.idleMs > 0) || !(options.lifetimeMs > 0))
      throw new RangeError('idleMs and lifetimeMs must be > 0');
    this.#store = options.store;
    this.#macKey = derive(options.secret, 'toolgate ops-console csrf');
    this.#sealKey = derive(options.secret, 'toolgate ops-console refresh-token seal');
    this.#clock = options.clock;
    this.#idleMs = options.idleMs;
    this.#lifetimeMs = options.lifetimeMs;
    this.#refresh = options.refresh;
    this.#onRefreshFailed = options.onRefreshFailed ?? (() => undefined);
  }

  /**
   * Starts a session for `identity` and stores it; resolves with it (its `sid` is the cookie value).
   * `notAfterMs` shortens the lifetime (e.g. to a pasted token's expiry).
   */
  async start(
    identity: SignedInIdentity,
    via: SignInVia,
    provider?: ProviderTokens,
    notAfterMs?: number,
  ): Promise<OperatorSession> {
    if (via === 'oidc' && provider === undefined) throw new Error('a provider sign-in needs its tokens');
    const now = this.#clock.now();
    const record: SessionRecord = {
      operator: identity.operator,
      roles: [...identity.roles],
      tenants: [...identity.tenants],
      via,
      createdAtMs: now,
      lastSeenAtMs: now,
      expiresAtMs: Math.min(now + this.#lifetimeMs, notAfterMs ?? Number.MAX_SAFE_INTEGER),
      ...(provider === undefined ? {} : { provider: this.#sealProvider(provider) }),
    };
    const sid = randomBytes(32).toString('base64url');
    await this.#save(sid, record, now);
    return sessionOf(sid, record);
  }

  /**
   * The live session of cookie value `sid`, or undefined: malformed, unknown (forged, signed out),
   * idle too long, past its lifetime, or its refresh at the provider failed (then it is deleted).
   * A live session's idle timer restarts.
   */
  async resume(sid: string | undefined): Promise<OperatorSession | undefined> {
    if (sid === undefined || !SESSION_ID.test(sid)) return undefined;
    const record = parseRecord(await this.#store.get(sid));
    if (record === undefined) return undefined;
    const now = this.#clock.now();
    if (now >= record.expiresAtMs || now >= record.lastSeenAtMs + this.#idleMs) {
      await this.#store.delete(sid);
      return undefined;
    }
    let current = record;
    if (record.provider !== undefined && now >= record.provider.accessExpiresAtMs) {
      const refreshed = await this.#refreshed(record);
      if (refreshed === undefined) {
        await this.#store.delete(sid);
        return undefined;
      }
      current = refreshed;
    }
    current = { ...current, lastSeenAtMs: now };
    await this.#save(sid, current, now);
    return sessionOf(sid, current);
  }

  /**
   * Ends session `sid`: deletes its record. Resolves with the provider's ID token of a provider
   * sign-in (for the provider's sign-out), else undefined. Idempotent.
   */
  async end(sid: string | undefined): Promise<{ readonly idToken?: string | undefined } | undefined> {
    if (sid === undefined || !SESSION_ID.test(sid)) return undefined;
    const record = parseRecord(await this.#store.take(sid));
    return record === undefined ? undefined : { idToken: record.provider?.idToken };
  }

  /** A session for one request only (a bearer token on it), never stored. */
  transient(identity: SignedInIdentity, via: SignInVia, expSec: number): OperatorSession {
    return {
      ...identity,
      roles: [...identity.roles],
      tenants: [...identity.tenants],
      via,
      sid: '',
      exp: expSec,
    };
  }

  /** The CSRF token of `session`, for the hidden field of every form. */
  csrfToken(session: OperatorSession): string {
    return createHmac('sha256', this.#macKey).update(`csrf:${session.sid}`).digest('base64url');
  }

  /** Whether `token` is `session`'s CSRF token (constant time). */
  checkCsrf(session: OperatorSession, token: unknown): boolean {
    if (typeof token !== 'string' || session.sid === '') return false;
    const a = Buffer.from(token);
    const b = Buffer.from(this.csrfToken(session));
    return a.length === b.length && timingSafeEqual(a, b);
  }

  async #refreshed(record: SessionRecord): Promise<SessionRecord | undefined> {
    const provider = record.provider!;
    try {
      if (this.#refresh === undefined) throw new Error('no identity provider is configured');
      const { identity, tokens } = await this.#refresh(this.#unseal(provider.sealedRefreshToken));
      // The provider decides: no console role left ends the session like a refused refresh.
      if (identity.roles.length === 0) throw new Error('the operator holds none of the console roles now');
      return {
        ...record,
        operator: identity.operator,
        roles: [...identity.roles],
        tenants: [...identity.tenants],
        provider: this.#sealProvider({ ...tokens, idToken: tokens.idToken ?? provider.idToken }),
      };
    } catch (err) {
      this.#onRefreshFailed(record.operator, err);
      return undefined;
    }
  }

  async #save(sid: string, record: SessionRecord, now: number): Promise<void> {
    const ttl = Math.min(record.expiresAtMs, record.lastSeenAtMs + this.#idleMs) - now;
    await this.#store.put(sid, JSON.stringify(record), Math.max(1, ttl));
  }

  #sealProvider(tokens: ProviderTokens): NonNullable<SessionRecord['provider']> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#sealKey, iv);
    const body = Buffer.concat([cipher.update(tokens.refreshToken, 'utf8'), cipher.final()]);
    return {
      sealedRefreshToken: Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url'),
      accessExpiresAtMs: tokens.accessExpiresAtMs,
      ...(tokens.idToken === undefined ? {} : { idToken: tokens.idToken }),
    };
  }

  #unseal(sealed: string): string {
    const bytes = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.#sealKey, bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  }
}

function derive(secret: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), purpose, 32));
}

function parseRecord(text: string | undefined): SessionRecord | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = RecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function sessionOf(sid: string, record: SessionRecord): OperatorSession {
  return {
    operator: record.operator,
    roles: record.roles,
    tenants: record.tenants,
    via: record.via,
    sid,
    exp: Math.floor(record.expiresAtMs / 1000),
  };
}

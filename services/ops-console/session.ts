import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { CONSOLE_ROLES, type ConsoleRole } from './roles.js';

/** The session cookie's name; `__Host-` where the console is served over https (no Domain, Path /). */
export function sessionCookieName(secure: boolean): string {
  return secure ? '__Host-tg_ops_session' : 'tg_ops_session';
}

/** A signed-in operator, as the session cookie carries it. */
export interface OperatorSession {
  /** The operator's principal id (the token's `sub`), e.g. `ann`; actions are by `operator:<id>`. */
  readonly operator: string;
  readonly roles: readonly ConsoleRole[];
  /**
   * The tenants they may see and act on, in claim form (`['*']`: every tenant, given on purpose).
   * Decisions use `tenantScopeOf(tenants)` (libs/core/tenant-scope.ts), through `scopeOf` (scope.ts).
   */
  readonly tenants: readonly string[];
  /** How they signed in: a verified identity-provider token, or the development login. */
  readonly via: 'token' | 'dev';
  /** Random per sign-in; the CSRF token is derived from it. */
  readonly sid: string;
  /** Epoch seconds. */
  readonly exp: number;
}

const SessionSchema = z.strictObject({
  operator: z.string().min(1).max(200),
  roles: z.array(z.enum(CONSOLE_ROLES)),
  tenants: z.array(z.string().min(1).max(256)).max(256),
  via: z.enum(['token', 'dev']),
  sid: z.string().regex(/^[A-Za-z0-9_-]{22,64}$/),
  exp: z.number().int().positive(),
});

/**
 * Signs and checks session cookies and the CSRF tokens bound to them, with one HMAC-SHA256 key.
 * A cookie is `base64url(json).base64url(hmac)`: readable by whoever holds it, unforgeable without
 * the key. The CSRF token is `hmac("csrf:" + sid)`, so it changes with every sign-in, cannot be
 * computed from the cookie without the key, and needs no server-side store (replicas share the key).
 */
export class SessionSigner {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length < 32) throw new RangeError('a session key needs at least 32 bytes');
    this.#key = key;
  }

  /** A new session for `operator` with `roles` over `tenants` (claim form), valid until `exp` (epoch seconds). */
  create(
    operator: string,
    roles: readonly ConsoleRole[],
    tenants: readonly string[],
    via: OperatorSession['via'],
    exp: number,
  ): OperatorSession {
    return {
      operator,
      roles: [...roles],
      tenants: [...tenants],
      via,
      sid: randomBytes(18).toString('base64url'),
      exp,
    };
  }

  /** The cookie value of `session`. */
  seal(session: OperatorSession): string {
    const body = Buffer.from(JSON.stringify(session)).toString('base64url');
    return `${body}.${this.#mac(`session:${body}`)}`;
  }

  /** The session a cookie value carries, or undefined when it is malformed, forged or expired at `nowMs`. */
  open(value: string | undefined, nowMs: number): OperatorSession | undefined {
    if (value === undefined || value.length > 4096) return undefined;
    const dot = value.indexOf('.');
    if (dot <= 0) return undefined;
    const body = value.slice(0, dot);
    if (!this.#equal(value.slice(dot + 1), this.#mac(`session:${body}`))) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    const parsed = SessionSchema.safeParse(json);
    if (!parsed.success || parsed.data.exp * 1000 <= nowMs) return undefined;
    return parsed.data;
  }

  /** The CSRF token of `session`, for the hidden field of every form. */
  csrfToken(session: OperatorSession): string {
    return this.#mac(`csrf:${session.sid}`);
  }

  /** Whether `token` is `session`'s CSRF token (constant time). */
  checkCsrf(session: OperatorSession, token: unknown): boolean {
    return typeof token === 'string' && this.#equal(token, this.csrfToken(session));
  }

  #mac(text: string): string {
    return createHmac('sha256', this.#key).update(text).digest('base64url');
  }

  #equal(a: string, b: string): boolean {
    const x = Buffer.from(a);
    const y = Buffer.from(b);
    return x.length === y.length && timingSafeEqual(x, y);
  }
}

import type { z } from 'zod';
import { ToolgateError } from '../core/errors.js';
import { attemptScope } from '../execution/attempt-scope.js';
import type { OutboundLimiter } from '../pipeline/deps.js';
import type { Clock } from '../core/clock.js';
import { errorForStatus, errorForTransport, HttpStatusError, type StatusWordings } from './http-error.js';
import { silentLogger, type Logger } from '../ports/logger.js';
import type { TokenProvider } from './token-provider.js';

/**
 * Whose authority a request carries:
 * - `none`: no credential (a legacy service on a private network);
 * - `service`: toolgate's own client credentials for `tenant`, from the TokenProvider;
 * - `user`: the end user's own token, forwarded, so the downstream applies its own access
 *   control exactly as if the user had called it.
 */
export type RestAuth =
  | { readonly kind: 'none' }
  | { readonly kind: 'service'; readonly tenant: string }
  | { readonly kind: 'user'; readonly token: string };

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request. `path` is relative to the client's base URL; build it with `restPath`. */
export interface RestRequest<T> {
  readonly method: HttpMethod;
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** Sent as JSON. */
  readonly body?: unknown;
  readonly auth: RestAuth;
  /** The 2xx body's shape; a body that does not match is BAD_OUTPUT. 204 parses `undefined`. */
  readonly response: z.ZodType<T>;
  readonly signal?: AbortSignal;
  /** Overrides the client's timeout for this request. */
  readonly timeoutMs?: number;
  readonly wordings?: StatusWordings;
}

/** Options of {@link RestClient}. */
export interface RestClientOptions {
  /** The downstream's name: its outbound budget, its log field, its name in messages. */
  readonly downstream: string;
  readonly baseUrl: string;
  readonly clock: Clock;
  /** Limit on one request, answer body included. */
  readonly timeoutMs: number;
  /** Needed for `service` auth. */
  readonly tokens?: TokenProvider;
  /** Audience `service` tokens are requested for. Default: `downstream`. */
  readonly audience?: string;
  /**
   * The shared outbound budget, usually `createOutboundLimiter` over the shared
   * RateLimiter: one token per HTTP request, under the `downstream` name. Every request of every
   * tool and executor then counts against the downstream's own limit. (When tools of this downstream
   * also name it as their `downstream`, leave it out of the catalog's `downstreamLimits`, or each
   * attempt spends one token more.)
   */
  readonly outbound?: OutboundLimiter;
  readonly logger?: Logger;
  /** Largest body read from an answer. Default 1 MiB; larger is BAD_OUTPUT. */
  readonly maxResponseBytes?: number;
  /** Default: global fetch. */
  readonly fetch?: typeof fetch;
}

/**
 * A REST client the tools wrap thinly: auth, outbound budget, timeouts and error mapping
 * live here, testable without any tool or model.
 *
 * Contract of {@link RestClient.request}:
 * - At most one outbound token per HTTP request; a wait for one that outlasts the request's time
 *   ends as RATE_LIMITED "not sent".
 * - One signal bounds the request and the body read: the caller's `signal` and the timeout. A
 *   timeout, abort or connection lost mid-request is TIMEOUT (outcome unknown for a state-changing
 *   request); nothing is retried here except the case below, so retry policy stays with the caller.
 * - With `service` auth, a 401 means the cached token was revoked early: it is invalidated and the
 *   request sent once more with a fresh token (a refused request was not applied, so this is safe
 *   for any method). A second 401 is mapped like any other.
 * - Non-2xx answers map through `errorForStatus` (404 → CALLER_ERROR with a fix; 401/403 →
 *   CALLER_ERROR not retryable; 429 → RATE_LIMITED with retryAfterMs; 5xx → SERVER_ERROR; 504 →
 *   TIMEOUT). A 2xx answer that is not JSON, too large, or not the declared shape is BAD_OUTPUT.
 * - Tokens and bodies are never logged; a debug line per request carries downstream, method,
 *   status and duration.
 */
export class RestClient {
  readonly #o: RestClientOptions;
  readonly #base: URL;
  readonly #logger: Logger;
  readonly #fetch: typeof fetch;

  constructor(options: RestClientOptions) {
    this.#o = options;
    this.#base = new URL(options.baseUrl);
    this.#logger = options.logger ?? silentLogger;
    this.#fetch = options.fetch ?? fetch;
  }

  get downstream(): string {
    return this.#o.downstream;
  }

  async request<T>(req: RestRequest<T>): Promise<T> {
    const url = this.#url(req.path, req.query);
    let token = await this.#credential(req);
    let answer = await this.#send(req, url, token);
    if (answer.status === 401 && req.auth.kind === 'service' && token !== undefined) {
      this.#tokens().invalidate(req.auth.tenant, this.#audience(), token);
      token = await this.#credential(req);
      answer = await this.#send(req, url, token);
    }
    if (answer.status < 200 || answer.status > 299) {
      throw errorForStatus(
        new HttpStatusError(this.#o.downstream, answer.status, answer.headers),
        this.#o.clock.now(),
        req.wordings,
      );
    }
    return this.#parse(req, answer.body);
  }

  async #credential(req: RestRequest<unknown>): Promise<string | undefined> {
    switch (req.auth.kind) {
      case 'none':
        return undefined;
      case 'user':
        return req.auth.token;
      case 'service':
        return this.#tokens().getToken(req.auth.tenant, this.#audience(), req.signal);
    }
  }

  async #send(
    req: RestRequest<unknown>,
    url: URL,
    token: string | undefined,
  ): Promise<{ status: number; headers: Headers; body: Uint8Array | undefined }> {
    const clock = this.#o.clock;
    const scope = attemptScope(
      req.signal ?? new AbortController().signal,
      req.timeoutMs ?? this.#o.timeoutMs,
      undefined,
      clock,
    );
    try {
      await this.#acquire(scope.signal, () => scope.cause());
      const headers: Record<string, string> = { accept: 'application/json' };
      if (token !== undefined) headers.authorization = `Bearer ${token}`;
      if (req.body !== undefined) headers['content-type'] = 'application/json';
      const startedAt = clock.now();
      let status = 0;
      try {
        const response = await this.#fetch(url, {
          method: req.method,
          headers,
          ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
          signal: scope.signal,
          redirect: 'error',
        });
        status = response.status;
        const ok = status >= 200 && status <= 299;
        // Error bodies are drained, not kept: they may echo what was sent.
        const body = ok
          ? await readCapped(response, this.#maxBytes(), this.#o.downstream)
          : await drain(response);
        this.#logger.debug(
          { downstream: this.#o.downstream, method: req.method, status, durationMs: clock.now() - startedAt },
          'downstream answered',
        );
        return { status, headers: response.headers, body };
      } catch (err) {
        if (err instanceof ToolgateError && err.code === 'BAD_OUTPUT') throw err;
        const error = errorForTransport(err, clock.now());
        this.#logger.warn(
          { downstream: this.#o.downstream, method: req.method, code: error.code, status },
          'downstream request failed',
        );
        throw error;
      }
    } finally {
      scope.dispose();
    }
  }

  async #acquire(signal: AbortSignal, cause: () => string | undefined): Promise<void> {
    if (this.#o.outbound === undefined) return;
    try {
      await this.#o.outbound.acquire(this.#o.downstream, signal);
    } catch (err) {
      if (cause() === 'timeout' || cause() === 'deadline') {
        throw new ToolgateError(
          'RATE_LIMITED',
          `The ${this.#o.downstream} service's rate limit did not free up in time; the request was not sent.`,
          { retryable: true, cause: err },
        );
      }
      throw err;
    }
  }

  #parse<T>(req: RestRequest<T>, body: Uint8Array | undefined): T {
    let value: unknown = undefined;
    if (body !== undefined && body.byteLength > 0) {
      try {
        value = JSON.parse(new TextDecoder().decode(body));
      } catch (err) {
        throw badOutput(this.#o.downstream, err);
      }
    }
    const parsed = req.response.safeParse(value);
    if (!parsed.success) throw badOutput(this.#o.downstream, parsed.error);
    return parsed.data;
  }

  #url(path: string, query: RestRequest<unknown>['query']): URL {
    if (!path.startsWith('/') || path.startsWith('//')) {
      throw new ToolgateError('INTERNAL', 'A request path must start with a single "/".');
    }
    const basePath = this.#base.pathname.replace(/\/+$/, '');
    const url = new URL(basePath + path, this.#base.origin);
    if (url.origin !== this.#base.origin || !url.pathname.startsWith(basePath)) {
      throw new ToolgateError('INTERNAL', 'A request path left the service it was built for.');
    }
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url;
  }

  #tokens(): TokenProvider {
    if (this.#o.tokens === undefined) {
      throw new ToolgateError('INTERNAL', `The ${this.#o.downstream} client has no token provider.`);
    }
    return this.#o.tokens;
  }

  #audience(): string {
    return this.#o.audience ?? this.#o.downstream;
  }

  #maxBytes(): number {
    return this.#o.maxResponseBytes ?? 1024 * 1024;
  }
}

function badOutput(downstream: string, cause: unknown): ToolgateError {
  return new ToolgateError('BAD_OUTPUT', `The ${downstream} service answered in an unexpected format.`, {
    retryable: false,
    cause,
  });
}

async function readCapped(response: Response, maxBytes: number, downstream: string): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw badOutput(downstream, new Error(`answer of ${declared} bytes exceeds ${maxBytes}`));
  }
  if (response.body === null) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw badOutput(downstream, new Error(`answer exceeds ${maxBytes} bytes`));
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

async function drain(response: Response): Promise<undefined> {
  await response.body?.cancel().catch(() => undefined);
  return undefined;
}

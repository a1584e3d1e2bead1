import { createPrivateKey, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryAuditStore } from '../../../libs/adapters/memory/audit-store.js';
import { MemoryCaseStore } from '../../../libs/adapters/memory/case-store.js';
import { MemoryIdempotencyStore } from '../../../libs/adapters/memory/memory-idempotency-store.js';
import { MemoryApprovalStore } from '../../../libs/adapters/memory/approval-store.js';
import { generatePrincipalKeys } from '../../../libs/auth/principal-keys.js';
import { signPrincipal } from '../../../libs/auth/sign-principal.js';
import { MemoryEventBus } from '../../../libs/bus/memory/memory-event-bus.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import { LocalEventCodec } from '../../../libs/events/local-codec.js';
import { topicNames } from '../../../libs/events/topics.js';
import { silentLogger } from '../../../libs/ports/logger.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import type { Operations } from '../../../libs/reconcile/operation-types.js';
import { DEFAULT_BACKOFF } from '../../../libs/core/backoff.js';
import { ApprovalsQueue } from '../../../services/ops-console/approvals.js';
import { createConsoleHandler, type ConsoleDeps } from '../../../services/ops-console/console-app.js';
import { OidcSignIn } from '../../../services/ops-console/oidc.js';
import { MemorySessionStore } from '../../../libs/adapters/memory/session-store.js';
import { OperatorSessions } from '../../../services/ops-console/session.js';
import { OperatorTokens } from '../../../services/ops-console/sign-in.js';
import { createConsoleMetrics } from '../../../services/ops-console/console-metrics.js';
import { Registry } from 'prom-client';

/**
 * The console's request handler on a real HTTP server over the memory stores: sign-in, the
 * development login, bearer tokens, and the refusals that happen before any operation runs
 * (counted on the operations the handler is given).
 */
const keys = generatePrincipalKeys('idp-1');
const signingKey = createPrivateKey(keys.privateKeyPem);
const ISSUER = 'idp';
const AUDIENCE = 'ops';
let url: string;
const servers: Server[] = [];
const calls: string[] = [];

const token = (id: string, roles: string[], issuer = ISSUER) =>
  signPrincipal({ id, tenant: 'ops', kind: 'user', scopes: [], roles }, signingKey, {
    issuer,
    audience: AUDIENCE,
    ttlSeconds: 300,
    kid: keys.kid,
  });

/** The handler on a real HTTP server on a free port, with `extra` in place of the defaults; its URL. */
async function serve(extra: Partial<ConsoleDeps> = {}): Promise<string> {
  const cases = new MemoryCaseStore(systemClock);
  const audit = new MemoryAuditStore();
  const topics = topicNames('unit');
  const operations: Operations = {
    listCases: (f) => cases.list(f),
    showCase: () => Promise.resolve(undefined),
    resolveByHand: (id) => {
      calls.push(`resolve ${id}`);
      return Promise.resolve({ ok: false, reason: 'not-found', detail: `no case ${id}` });
    },
    redrive: (id) => {
      calls.push(`redrive ${id}`);
      return Promise.resolve({ ok: false, reason: 'not-found', detail: `no case ${id}` });
    },
  };
  const delivery = {
    publisher: new MemoryEventBus(),
    codec: new LocalEventCodec(),
    topics,
    idempotency: new MemoryIdempotencyStore(systemClock),
    clock: systemClock,
    logger: silentLogger,
    backoff: DEFAULT_BACKOFF,
    replyTopics: {},
    resultTtlMs: 60_000,
  };
  const handler = createConsoleHandler({
    operations,
    cases,
    tools: new ToolRegistry(),
    audit,
    chains: () => Promise.resolve([]),
    approvals: new ApprovalsQueue({
      approvals: new MemoryApprovalStore(systemClock),
      tools: new ToolRegistry(),
      clock: systemClock,
      delivery,
    }),
    sessions: new OperatorSessions({
      store: new MemorySessionStore(systemClock),
      secret: randomBytes(32),
      clock: systemClock,
      idleMs: 600_000,
      lifetimeMs: 3_600_000,
    }),
    oidc: undefined,
    pendingSignIns: new MemorySessionStore(systemClock),
    tokens: new OperatorTokens({ jwks: keys.jwks, issuer: ISSUER, audience: AUDIENCE }),
    devLogin: true,
    origin: 'http://console.test',
    clock: systemClock,
    logger: silentLogger,
    delivery,
    metrics: createConsoleMetrics(new Registry()),
    ...extra,
  });
  const server = createServer((req, res) => void handler(req, res));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  url = await serve();
});

afterAll(async () => {
  for (const server of servers) await new Promise<void>((resolve) => server.close(() => resolve()));
});

const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      origin: 'http://console.test',
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    body: new URLSearchParams(form),
    redirect: 'manual',
  });

const cookieOf = (res: Response): string => (res.headers.get('set-cookie') ?? '').split(';', 1)[0]!;

describe('the console handler', () => {
  it('sends a visitor without a session to the sign-in page, and serves pages without scripts', async () => {
    const res = await fetch(`${url}/cases?state=open`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/login?next=%2Fcases%3Fstate%3Dopen');
    const login = await fetch(`${url}/login`);
    expect(login.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(login.headers.get('x-frame-options')).toBe('DENY');
    expect(await login.text()).not.toContain('<script');
  });

  it('signs in with a pasted token (development): an HttpOnly, SameSite=Lax session id; the token never comes back', async () => {
    const t = await token('ann', ['operator']);
    const res = await post('/login', { token: t });
    expect(res.status).toBe(303);
    const setCookie = res.headers.get('set-cookie')!;
    expect(setCookie).toMatch(
      /^tg_ops_session=[A-Za-z0-9_-]{43}; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Lax$/,
    );
    const page = await fetch(`${url}/cases`, { headers: { cookie: cookieOf(res) } });
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain('operator:ann · operator');
    expect(text).not.toContain(t);
    expect(setCookie).not.toContain(t);
  });

  it('refuses a token of another issuer, one without console roles, and a sign-in posted from another site', async () => {
    expect((await post('/login', { token: await token('ann', ['operator'], 'elsewhere') })).status).toBe(401);
    const roleless = await post('/login', { token: await token('ann', ['support']) });
    expect(roleless.status).toBe(401);
    expect(await roleless.text()).toContain('none of the console roles');
    const cross = await post(
      '/login',
      { token: await token('ann', ['operator']) },
      { origin: 'http://evil.test' },
    );
    expect(cross.status).toBe(403);
    expect(cross.headers.get('set-cookie')).toBeNull();
  });

  it('takes a bearer token per request: a viewer may look and is refused before any operation runs', async () => {
    const auth = { authorization: `Bearer ${await token('vic', ['viewer'])}` };
    expect((await fetch(`${url}/cases`, { headers: auth })).status).toBe(200);
    expect((await post('/cases/c-1/resolve', { outcome: 'failed', note: 'x' }, auth)).status).toBe(403);
    expect((await post('/cases/c-1/redrive', { note: 'x' }, auth)).status).toBe(403);
    expect(calls).toEqual([]);
    const op = { authorization: `Bearer ${await token('ann', ['operator'])}` };
    // An operator passes the role check; the unknown case is answered 404 before any operation runs.
    expect((await post('/cases/c-1/resolve', { outcome: 'failed', note: 'x' }, op)).status).toBe(404);
    expect(calls).toEqual([]);
    expect((await fetch(`${url}/cases`, { headers: { authorization: 'Bearer not-a-token' } })).status).toBe(
      401,
    );
  });

  it('answers 400 with a clear message for a NUL or a malformed %-encoding in the path, query or form', async () => {
    const cookie = cookieOf(await post('/login/dev', { operator: 'dev-2', role: 'operator', tenants: '*' }));
    const get = (path: string) => fetch(`${url}${path}`, { headers: { cookie }, redirect: 'manual' });
    const nulInFilter = await get('/cases?tool=issue%00refund');
    expect(nulInFilter.status).toBe(400);
    expect(await nulInFilter.text()).toContain('the query holds a NUL character');
    const nulInId = await get('/cases/c%00-1');
    expect(nulInId.status).toBe(400);
    expect(await nulInId.text()).toContain('the address holds a NUL character');
    const malformed = await get('/cases/%E0%A4%A');
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).toContain('the address holds a malformed %-encoding');
    expect((await get('/audit?principal=%E0%A4%A')).status).toBe(400);
    expect((await get('/approvals/%ZZ/decide')).status).toBe(400);
    const form = await fetch(`${url}/cases/c-1/resolve`, {
      method: 'POST',
      headers: {
        origin: 'http://console.test',
        cookie,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'outcome=failed&note=a%00b',
    });
    expect(form.status).toBe(400);
    expect(await form.text()).toContain('the form holds a NUL character');
    expect(calls).toEqual([]);
    // The same requests, well formed, reach the pages.
    expect((await get('/cases?tool=issue_refund')).status).toBe(200);
    expect((await get('/cases/c-1')).status).toBe(404);
  });

  it('signs in through the development login only with a known role and a plain name', async () => {
    const res = await post('/login/dev', { operator: 'dev-1', role: 'approver', tenants: 't1' });
    expect(res.status).toBe(303);
    const page = await (await fetch(`${url}/approvals`, { headers: { cookie: cookieOf(res) } })).text();
    expect(page).toContain('operator:dev-1 · approver · tenants t1 · development login');
    const noTenants = await post('/login/dev', { operator: 'dev-1', role: 'viewer', tenants: ' , ' });
    expect(noTenants.status).toBe(400);
    expect((await post('/login/dev', { operator: 'dev-1', role: 'admin', tenants: 't1' })).status).toBe(400);
    expect((await post('/login/dev', { operator: '<b>', role: 'viewer', tenants: 't1' })).status).toBe(400);
  });

  it('the approvals pages refuse an unknown state or a forged page position, and answer 404 for an unknown request', async () => {
    const cookie = cookieOf(await post('/login/dev', { operator: 'dev-2', role: 'approver', tenants: '*' }));
    const get = (path: string) => fetch(`${url}${path}`, { headers: { cookie } });
    expect((await get('/approvals?state=pending')).status).toBe(200);
    expect((await get('/approvals?state=approved')).status).toBe(200);
    expect((await get("/approvals?state=pending' OR 1=1")).status).toBe(400);
    expect((await get('/approvals?after=not-a-position')).status).toBe(400);
    expect((await get('/approvals/no-such-request')).status).toBe(404);
  });
});

describe('the console handler with an identity provider', () => {
  it('sends a visitor to the provider by way of /login/start, and answers 503 when the provider cannot be reached', async () => {
    const base = await serve({
      devLogin: false,
      oidc: new OidcSignIn(
        {
          // Port 9 (discard) on loopback: nothing answers there.
          issuer: 'http://127.0.0.1:9/realms/none',
          clientId: 'ops-console',
          clientSecret: 'secret',
          redirectUri: 'http://console.test/auth/callback',
          scopes: ['openid'],
          claims: { operator: 'preferred_username', roles: 'roles', tenants: 'tenants' },
        },
        systemClock,
      ),
    });
    const page = await fetch(`${base}/cases/c-1?tab=story`, { redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/login/start?next=%2Fcases%2Fc-1%3Ftab%3Dstory');
    const start = await fetch(`${base}/login/start?next=%2Fcases`, { redirect: 'manual' });
    expect(start.status).toBe(503);
    expect(await start.text()).toContain('The identity provider cannot be reached');
    expect(start.headers.get('set-cookie')).toBeNull();
    // A callback that no sign-in of this browser started is refused without asking the provider.
    const callback = await fetch(`${base}/auth/callback?code=x&state=y`, { redirect: 'manual' });
    expect(callback.status).toBe(400);
  });
});

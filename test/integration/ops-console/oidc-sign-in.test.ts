import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { useKeycloak, type KeycloakUser, type TestKeycloak } from '../../helpers/keycloak.js';
import { manualCase, startConsoleStack, type ConsoleStack } from './console-stack.js';
import { otherSite } from './other-site.js';

/**
 * Signing in to the console through a real OpenID Connect provider: Keycloak (deploy/local, the
 * `toolgate` realm), its login page filled in headless Chromium, the console on the real servers
 * with its sessions in Redis. Time on the console's side is a manual clock: idle timeout,
 * lifetime and access-token expiry are reached by advancing it, never by waiting. Each test makes
 * its own Keycloak user and cases.
 */
const MIN = 60_000;
const clock = new ManualClock(Date.now());
let keycloak: TestKeycloak;
let stack: ConsoleStack;

beforeAll(async () => {
  keycloak = await useKeycloak();
  stack = await startConsoleStack({
    oidc: { issuer: keycloak.issuer, clientId: keycloak.client.id, clientSecret: keycloak.client.secret },
    env: { OPS_CONSOLE_SESSION_IDLE_SEC: String(30 * 60), OPS_CONSOLE_SESSION_TTL_SEC: String(2 * 3600) },
    clock,
  });
});

afterAll(async () => {
  await stack?.close();
  await keycloak?.release();
});

/** Opens `path` on the console in `page` and signs in on Keycloak's login page as `user`. */
async function signInAt(page: Page, path: string, user: KeycloakUser): Promise<void> {
  await page.goto(`${stack.url}${path}`);
  expect(page.url().startsWith(`${keycloak.issuer}/protocol/openid-connect/auth?`)).toBe(true);
  await page.fill('#username', user.username);
  await page.fill('#password', user.password);
  await page.click('#kc-login');
  await page.waitForURL(`${stack.url}${path}`);
}

/** The page's session cookie as a `cookie` header, as a copy of it would be replayed. */
async function cookieHeader(page: Page): Promise<string> {
  return (await page.context().cookies(stack.url)).map((k) => `${k.name}=${k.value}`).join('; ');
}

function csrfOf(page: Page): Promise<string> {
  return page.getAttribute('form[action="/logout"] input[name=_csrf]', 'value') as Promise<string>;
}

/** GET `path` with the browser's cookies, not following redirects: status and location. */
async function probe(page: Page, path: string): Promise<{ status: number; location?: string | undefined }> {
  const res = await page.context().request.get(`${stack.url}${path}`, { maxRedirects: 0 });
  return { status: res.status(), location: res.headers().location };
}

describe('sign-in through Keycloak', () => {
  it('signs in on the provider’s login page and lands on the case first asked for; the cookie is only a session id', async () => {
    const user = await keycloak.createUser(['viewer', 'operator'], ['*']);
    const c = await manualCase(stack);
    const page = await stack.freshPage();
    await signInAt(page, `/cases/${c.caseId}`, user);
    expect(await page.textContent('main')).toContain('only a person can tell');
    expect(await page.textContent('header')).toContain(`operator:${user.username} · viewer, operator`);
    const [cookie, ...others] = await page.context().cookies(stack.url);
    expect(others).toEqual([]);
    expect(cookie).toMatchObject({ name: 'tg_ops_session', httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(cookie!.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The record is in Redis under the deployment's prefix; the refresh token is not in it in the clear.
    const record = (await stack.redis.redis.get(
      `${stack.redis.prefix}ops-console:session:${cookie!.value}`,
    ))!;
    expect(JSON.parse(record)).toMatchObject({
      operator: user.username,
      roles: ['viewer', 'operator'],
      tenants: ['*'],
      via: 'oidc',
    });
  });

  it('finishes a sign-in once, in the browser that started it: a replayed or carried-over callback is refused', async () => {
    const user = await keycloak.createUser(['viewer'], ['acme', 'globex']);
    const page = await stack.freshPage();
    const callbacks: string[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(`${stack.url}/auth/callback?`)) callbacks.push(r.url());
    });
    await signInAt(page, '/cases', user);
    const sid = (await page.context().cookies(stack.url))[0]!.value;
    const record = await stack.redis.redis.get(`${stack.redis.prefix}ops-console:session:${sid}`);
    expect(JSON.parse(record!).tenants).toEqual(['acme', 'globex']);
    expect(callbacks).toHaveLength(1);
    // The same callback again, in the same browser (its sign-in is used up) and in another one
    // (which never started it: a sign-in pushed onto someone else's browser).
    for (const replay of [page, await stack.freshPage()]) {
      const res = await replay.context().request.get(callbacks[0]!, { maxRedirects: 0 });
      expect(res.status()).toBe(400);
      expect(res.headers()['set-cookie'] ?? '').not.toMatch(/tg_ops_session=[A-Za-z0-9_-]{43}/);
    }
  });

  it('refuses a return target on another site: after sign-in the operator is on the console', async () => {
    const user = await keycloak.createUser(['viewer'], ['acme']);
    const page = await stack.freshPage();
    await page.goto(`${stack.url}/login/start?next=${encodeURIComponent('//evil.test/steal')}`);
    await page.fill('#username', user.username);
    await page.fill('#password', user.password);
    await page.click('#kc-login');
    await page.waitForURL(`${stack.url}/cases`);
  });

  it('sign-out ends the session: the old cookie replayed from another client gets no data and cannot resolve', async () => {
    const user = await keycloak.createUser(['operator'], ['*']);
    const c = await manualCase(stack);
    const page = await stack.freshPage();
    await signInAt(page, `/cases/${c.caseId}`, user);
    const cookie = await cookieHeader(page);
    const csrf = await csrfOf(page);
    await page.click('button:has-text("Sign out")');
    await page.waitForURL(`${stack.url}/login?signed-out`);
    expect(await page.textContent('[role=status]')).toContain('You have signed out.');

    const other = await request.newContext({ extraHTTPHeaders: { cookie } });
    try {
      const list = await other.get(`${stack.url}/cases`, { maxRedirects: 0 });
      expect(list.status()).toBe(303);
      expect(list.headers().location).toBe('/login/start?next=%2Fcases');
      const resolve = await other.post(`${stack.url}/cases/${c.caseId}/resolve`, {
        form: { _csrf: csrf, outcome: 'succeeded', note: 'replayed after sign-out' },
        headers: { origin: stack.url },
        maxRedirects: 0,
      });
      expect(resolve.status()).toBe(401);
    } finally {
      await other.dispose();
    }
    expect(await stack.cases.get(c.caseId)).toMatchObject({ state: 'needs_manual', version: c.version });
    // The provider's session ended too: the same browser is asked for its password again.
    await page.goto(`${stack.url}/cases`);
    expect(page.url().startsWith(keycloak.issuer)).toBe(true);
    expect(await page.isVisible('#password')).toBe(true);
  });

  it('a case link on a page of another site arrives on that case: signed in at once, or after signing in', async () => {
    const user = await keycloak.createUser(['operator'], ['*']);
    const c = await manualCase(stack);
    const pager = await otherSite(`<a id="case" href="${stack.url}/cases/${c.caseId}">case</a>`);
    try {
      const signedIn = await stack.freshPage();
      await signInAt(signedIn, '/cases', user);
      await signedIn.goto(pager.url);
      await signedIn.click('#case');
      await signedIn.waitForURL(`${stack.url}/cases/${c.caseId}`);
      expect(await signedIn.textContent('main')).toContain('only a person can tell');

      const fresh = await stack.freshPage();
      await fresh.goto(pager.url);
      await fresh.click('#case');
      await fresh.waitForURL((u) => u.href.startsWith(keycloak.issuer));
      await fresh.fill('#username', user.username);
      await fresh.fill('#password', user.password);
      await fresh.click('#kc-login');
      await fresh.waitForURL(`${stack.url}/cases/${c.caseId}`);
      expect(await fresh.textContent('main')).toContain('only a person can tell');
    } finally {
      await pager.close();
    }
  });

  it('ends a session idle for 30 minutes, and any session 2 hours after sign-in however busy', async () => {
    const user = await keycloak.createUser(['viewer'], ['*']);
    const idle = await stack.freshPage();
    await signInAt(idle, '/cases', user);
    await clock.advance(29 * MIN);
    expect((await probe(idle, '/cases')).status).toBe(200);
    await clock.advance(30 * MIN);
    expect(await probe(idle, '/cases')).toEqual({ status: 303, location: '/login/start?next=%2Fcases' });

    const busy = await stack.freshPage();
    await signInAt(busy, '/cases', user);
    for (let t = 25; t < 120; t += 25) {
      await clock.advance(25 * MIN);
      expect((await probe(busy, '/cases')).status).toBe(200);
    }
    await clock.advance(25 * MIN);
    expect((await probe(busy, '/cases')).status).toBe(303);
  });

  it('a role removed in Keycloak takes effect at the next refresh; a disabled user’s session then ends', async () => {
    const user = await keycloak.createUser(['viewer', 'operator'], ['*']);
    const c = await manualCase(stack);
    const page = await stack.freshPage();
    await signInAt(page, `/cases/${c.caseId}`, user);
    const csrf = await csrfOf(page);
    await keycloak.removeRole(user, 'operator');
    // Until the access token expires the console keeps what the provider said at sign-in.
    await page.reload();
    expect(await page.textContent('header')).toContain('viewer, operator');
    await clock.advance(6 * MIN);
    await page.reload();
    expect(await page.textContent('header')).toContain(`operator:${user.username} · viewer`);
    expect(await page.textContent('header')).not.toContain('operator,');
    const resolve = await page.context().request.post(`${stack.url}/cases/${c.caseId}/resolve`, {
      form: { _csrf: csrf, outcome: 'succeeded', note: 'after the role was removed' },
      headers: { origin: stack.url },
      maxRedirects: 0,
    });
    expect(resolve.status()).toBe(403);
    expect(await stack.cases.get(c.caseId)).toMatchObject({ state: 'needs_manual', version: c.version });

    await keycloak.disable(user);
    await clock.advance(6 * MIN);
    expect((await probe(page, '/cases')).status).toBe(303);
    const sid = (await page.context().cookies(stack.url))[0]!.value;
    expect(await stack.redis.redis.exists(`${stack.redis.prefix}ops-console:session:${sid}`)).toBe(0);
  });

  it('has no development sign-in without the switch: neither name-and-role nor a pasted token', async () => {
    const other = await request.newContext();
    try {
      for (const [path, form] of [
        ['/login/dev', { operator: 'eve', role: 'operator' }],
        ['/login', { token: 'anything' }],
      ] as const) {
        const res = await other.post(`${stack.url}${path}`, {
          form,
          headers: { origin: stack.url },
          maxRedirects: 0,
        });
        expect(res.status()).toBe(404);
        expect(res.headers()['set-cookie']).toBeUndefined();
      }
      const login = await (await other.get(`${stack.url}/login`)).text();
      expect(login).toContain('Sign in with your identity provider');
      expect(login).not.toContain('name="token"');
      expect(login).not.toContain('/login/dev');
    } finally {
      await other.dispose();
    }
  });

  it('refuses a forged or unknown session id', async () => {
    for (const value of [randomBytes(32).toString('base64url'), 'forged', `${'A'.repeat(43)}`]) {
      const other = await request.newContext({ extraHTTPHeaders: { cookie: `tg_ops_session=${value}` } });
      try {
        const res = await other.get(`${stack.url}/cases`, { maxRedirects: 0 });
        expect(res.status()).toBe(303);
        expect(res.headers().location).toBe('/login/start?next=%2Fcases');
      } finally {
        await other.dispose();
      }
    }
  });

  it('still refuses a cross-site form post, and one with the cookie and a foreign Origin', async () => {
    const user = await keycloak.createUser(['operator'], ['*']);
    const c = await manualCase(stack);
    const page = await stack.freshPage();
    await signInAt(page, `/cases/${c.caseId}`, user);
    const csrf = await csrfOf(page);
    const evil = await otherSite(
      `<form method="post" action="${stack.url}/cases/${c.caseId}/resolve">` +
        `<input name="_csrf" value="${csrf}"><input name="outcome" value="succeeded">` +
        `<input name="note" value="forged"><button id="go">go</button></form>`,
    );
    try {
      await page.goto(evil.url);
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/resolve')),
        page.click('#go'),
      ]);
      expect(answer.status()).toBe(403);
      const crafted = await request.newContext({ extraHTTPHeaders: { cookie: await cookieHeader(page) } });
      try {
        const res = await crafted.post(`${stack.url}/cases/${c.caseId}/resolve`, {
          form: { _csrf: csrf, outcome: 'succeeded', note: 'forged' },
          headers: { origin: 'http://127.0.0.2' },
          maxRedirects: 0,
        });
        expect(res.status()).toBe(403);
      } finally {
        await crafted.dispose();
      }
    } finally {
      await evil.close();
    }
    expect(await stack.cases.get(c.caseId)).toMatchObject({ state: 'needs_manual', version: c.version });
  });
});

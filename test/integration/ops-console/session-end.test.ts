import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'playwright-core';
import { manualCase, startConsoleStack, type ConsoleStack } from './console-stack.js';
import { otherSite } from './other-site.js';

/**
 * Sign-out ends a session everywhere, and a link to a case followed from another site arrives
 * signed in — in headless Chromium against the real servers. The console here uses the
 * development sign-in (a pasted token), so these hold for every way of signing in; the OpenID
 * Connect sign-in has its own tests (oidc-sign-in.test.ts).
 */
let stack: ConsoleStack;

beforeAll(async () => {
  stack = await startConsoleStack();
});

afterAll(async () => {
  await stack?.close();
});

describe('console sessions in Chromium', () => {
  it('after sign-out, the old cookie replayed from another client gets no data and cannot resolve a case', async () => {
    const c = await manualCase(stack);
    const page = await stack.signedIn('ann', ['operator']);
    await page.goto(`${stack.url}/cases/${c.caseId}`);
    expect(await page.textContent('main')).toContain(c.caseId);
    // What a copy of the cookie (a stolen one, or one on a shared machine) would carry.
    const cookie = (await page.context().cookies(stack.url)).map((k) => `${k.name}=${k.value}`).join('; ');
    const csrf = (await page.getAttribute('form[action="/logout"] input[name=_csrf]', 'value'))!;
    await page.click('button:has-text("Sign out")');
    await page.waitForURL(/\/login/);

    const other = await request.newContext({ extraHTTPHeaders: { cookie } });
    try {
      const list = await other.get(`${stack.url}/cases`, { maxRedirects: 0 });
      expect(list.status()).toBe(303);
      expect(list.headers().location).toMatch(/^\/login/);
      expect(await list.text()).not.toContain(c.caseId);
      const one = await other.get(`${stack.url}/cases/${c.caseId}`, { maxRedirects: 0 });
      expect(one.status()).toBe(303);
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
  });

  it('a link to a case on a page of another site arrives signed in on that case', async () => {
    const c = await manualCase(stack);
    const page = await stack.signedIn('ann', ['operator']);
    const pager = await otherSite(`<a id="case" href="${stack.url}/cases/${c.caseId}">case ${c.caseId}</a>`);
    try {
      await page.goto(pager.url);
      await page.click('#case');
      await page.waitForLoadState('domcontentloaded');
      expect(page.url()).toBe(`${stack.url}/cases/${c.caseId}`);
      expect(await page.textContent('main')).toContain('only a person can tell');
      expect(await page.textContent('header')).toContain('operator:ann');
    } finally {
      await pager.close();
    }
  });
});

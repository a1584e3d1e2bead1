import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReconciliationCase } from '../../../libs/ports/case-store.js';
import { eventually, manualCase, startConsoleStack, type ConsoleStack } from './console-stack.js';

/**
 * The ops console in headless Chromium against the real servers: cases in Postgres, idempotency
 * records in Redis, audit records through Kafka and the audit sink into Postgres. Each test makes
 * its own cases and previews; negatives are proved by counting (case versions, audit records,
 * messages on the calls topic, tool invocations).
 */
const DOCS = fileURLToPath(new URL('../../../services/ops-console/docs/', import.meta.url));
let stack: ConsoleStack;

beforeAll(async () => {
  stack = await startConsoleStack();
  await mkdir(DOCS, { recursive: true });
});

afterAll(async () => {
  await stack?.close();
});

/**
 * A crafted form POST with the browser's session cookie and the console's own Origin, as a script
 * or a tampered page would send it (the console's CSP keeps its pages from fetching at all).
 */
async function postFromPage(page: Page, path: string, fields: Record<string, string>): Promise<number> {
  const response = await page.context().request.post(`${stack.url}${path}`, {
    form: fields,
    headers: { origin: stack.url },
    maxRedirects: 0,
  });
  return response.status();
}

/** The CSRF token of the page's session (the hidden field of its sign-out form). */
function csrfOf(page: Page): Promise<string> {
  return page.getAttribute('form[action="/logout"] input[name=_csrf]', 'value') as Promise<string>;
}

/** Messages ever written to the calls topic (sum of the partitions' high watermarks). */
async function callsWritten(): Promise<number> {
  const offsets = await (await stack.kafka.admin()).fetchTopicOffsets(stack.topics.calls);
  return offsets.reduce((sum, o) => sum + Number(o.high), 0);
}

describe('the ops console in Chromium on the real servers', () => {
  let resolved: ReconciliationCase;

  it('lists cases, opens one, resolves it with a reason, and the audit log shows the operator', async () => {
    const c = await manualCase(stack);
    const page = await stack.signedIn('ann', ['operator']);
    await page.goto(`${stack.url}/cases?state=needs_manual&tool=issue_refund`);
    await page.screenshot({ path: `${DOCS}cases.png`, fullPage: true });
    await page.goto(`${stack.url}/dead-letters?reason=UNRESOLVED&tool=issue_refund&age=lt1h`);
    const deadLetters = await page.textContent('main');
    expect(deadLetters).toContain(c.deadLetterId);
    expect(deadLetters).toContain('TIMEOUT The payments service did not answer in time.');
    await page.goto(`${stack.url}/cases?state=needs_manual&tool=issue_refund&age=gt24h`);
    expect(await page.textContent('main')).not.toContain(c.caseId);
    await page.goto(`${stack.url}/cases?state=needs_manual&tool=issue_refund`);
    await page.click(`a:has-text("${c.caseId}")`);
    expect(await page.textContent('main')).toContain('only a person can tell');
    expect(await page.textContent('main')).toContain(c.traceId!);
    await page.screenshot({ path: `${DOCS}case.png`, fullPage: true });
    await page.selectOption('select[name=outcome]', 'succeeded');
    await page.fill('form[action$="/resolve"] textarea[name=note]', 'payments ledger shows refund R-88');
    await page.click('button:has-text("Resolve")');
    expect(await page.textContent('[role=status]')).toContain('Resolved: the case is now resolved_succeeded');

    const stored = await stack.cases.get(c.caseId);
    expect(stored).toMatchObject({
      state: 'resolved_succeeded',
      resolution: { by: 'operator:ann', note: 'payments ledger shows refund R-88' },
    });
    resolved = stored!;
    const [record] = await eventually('the operator audit record', async () => {
      const rows = await stack.audit.query({ principalId: 'operator:ann', callId: c.callId! });
      return rows.length > 0 ? rows : undefined;
    });
    expect(record).toMatchObject({ source: 'operator', record: { outcome: 'SUCCESS' } });
    expect(record!.record.decisions[0]!.reason).toContain(`case ${c.caseId}`);
    expect(record!.record.decisions[0]!.reason).toContain('payments ledger shows refund R-88');

    await page.goto(`${stack.url}/audit?principal=operator:ann&source=operator`);
    const audit = await page.textContent('main');
    expect(audit).toContain('operator:ann');
    expect(audit).toContain(
      `resolved by hand (succeeded) by operator:ann: payments ledger shows refund R-88`,
    );
    await page.goto(`${stack.url}/audit?resource=${encodeURIComponent(c.resourceKey!)}`);
    expect(await page.locator('h2:has-text("Did") + table').textContent()).toContain('operator:ann');
    await page.screenshot({ path: `${DOCS}audit.png`, fullPage: true });
    await page.goto(`${stack.url}/chains`);
    expect(await page.textContent('main')).toMatch(/t1\s*verified/);
    await page.screenshot({ path: `${DOCS}chains.png`, fullPage: true });
  });

  it('a redrive of an already resolved case executes nothing and says why not', async () => {
    const page = await stack.signedIn('ann', ['operator']);
    await page.goto(`${stack.url}/cases/${resolved.caseId}`);
    expect(await page.textContent('main')).toContain('Why not:');
    expect(await page.locator('form[action$="/redrive"]').count()).toBe(0);
    const calls = await callsWritten();
    const records = (await stack.audit.query({ callId: resolved.callId! })).length;
    const status = await postFromPage(page, `/cases/${resolved.caseId}/redrive`, {
      _csrf: await csrfOf(page),
      note: 'run it again',
      assertion: 'signed.principal.assertion',
    });
    expect(status).toBe(409);
    expect((await stack.cases.get(resolved.caseId))?.version).toBe(resolved.version);
    expect(await callsWritten()).toBe(calls);
    expect((await stack.audit.query({ callId: resolved.callId! })).length).toBe(records);
  });

  it('a viewer cannot act: the server refuses a crafted POST, whatever the page shows', async () => {
    const c = await manualCase(stack);
    const page = await stack.signedIn('vic', ['viewer']);
    await page.goto(`${stack.url}/cases/${c.caseId}`);
    expect(await page.locator('form[action$="/resolve"]').count()).toBe(0);
    expect(await page.textContent('main')).toContain('do not include operator');
    const csrf = await csrfOf(page);
    expect(
      await postFromPage(page, `/cases/${c.caseId}/resolve`, {
        _csrf: csrf,
        outcome: 'failed',
        note: 'mine now',
      }),
    ).toBe(403);
    expect(await postFromPage(page, `/cases/${c.caseId}/redrive`, { _csrf: csrf, note: 'again' })).toBe(403);
    expect(
      await postFromPage(page, `/approvals/any/decide`, { _csrf: csrf, verdict: 'approve', reason: 'ok' }),
    ).toBe(403);
    expect((await stack.cases.get(c.caseId))?.version).toBe(c.version);
    expect(await stack.audit.query({ principalId: 'operator:vic' })).toEqual([]);
  });

  it('refuses a forged, missing or cross-site CSRF token before acting', async () => {
    const c = await manualCase(stack);
    const page = await stack.signedIn('ann', ['operator']);
    await page.goto(`${stack.url}/cases/${c.caseId}`);
    const fields = { outcome: 'failed', note: 'refund never left the bank' };
    expect(await postFromPage(page, `/cases/${c.caseId}/resolve`, fields)).toBe(403);
    const forged = randomBytes(32).toString('base64url');
    expect(await postFromPage(page, `/cases/${c.caseId}/resolve`, { ...fields, _csrf: forged })).toBe(403);
    // The right token and the session cookie, but posted from another site: the Origin check refuses it.
    const cookies = await page.context().cookies(stack.url);
    const crossSite = await fetch(`${stack.url}/cases/${c.caseId}/resolve`, {
      method: 'POST',
      headers: {
        origin: 'http://evil.example',
        cookie: cookies.map((k) => `${k.name}=${k.value}`).join('; '),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ ...fields, _csrf: await csrfOf(page) }),
      redirect: 'manual',
    });
    expect(crossSite.status).toBe(403);
    expect((await stack.cases.get(c.caseId))?.version).toBe(c.version);
    // The same form with the page's own token goes through (and redirects to the case page).
    expect(
      await postFromPage(page, `/cases/${c.caseId}/resolve`, { ...fields, _csrf: await csrfOf(page) }),
    ).toBe(303);
    expect((await stack.cases.get(c.caseId))?.state).toBe('resolved_failed');
  });
});

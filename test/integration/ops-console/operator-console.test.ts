import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryIdempotencyStore } from '../../../libs/adapters/memory/memory-idempotency-store.js';
import { PostgresAuditStore } from '../../../libs/adapters/postgres/audit-store.js';
import { PostgresCaseStore } from '../../../libs/adapters/postgres/case-store.js';
import { MemoryApprovalStore } from '../../../libs/adapters/memory/approval-store.js';
import { MemoryEventBus } from '../../../libs/bus/memory/memory-event-bus.js';
import { DEFAULT_BACKOFF } from '../../../libs/core/backoff.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import { LocalEventCodec } from '../../../libs/events/local-codec.js';
import { topicNames } from '../../../libs/events/topics.js';
import type { ReconciliationCase } from '../../../libs/ports/case-store.js';
import { silentLogger } from '../../../libs/ports/logger.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { ApprovalsQueue } from '../../../services/ops-console/approvals.js';
import { createConsoleHandler } from '../../../services/ops-console/console-app.js';
import { createConsoleMetrics } from '../../../services/ops-console/console-metrics.js';
import { OperatorSessions } from '../../../services/ops-console/session.js';
import { MemorySessionStore } from '../../../libs/adapters/memory/session-store.js';
import { deadLetteredRefund, leaveUnresolved } from '../../helpers/dead-lettered-refund.js';
import { uniqueName } from '../../helpers/names.js';
import { envelope, policyRefusedRecord } from '../../unit/audit/fixtures.js';
import { databaseUrlFor } from '../cli/cli-env.js';
import { eventually, startConsoleStack, type ConsoleStack } from './console-stack.js';
import { deadLetter } from '../../unit/audit/fixtures.js';

/**
 * Tenant scoping, hidden characters and bad input in the ops console, in headless Chromium against
 * the real servers (cases and the audit log in Postgres, audit records through Kafka and the audit
 * sink); and load shedding when the console's Postgres pool is saturated. Every test works in
 * tenants of its own.
 */
let stack: ConsoleStack;
let n = 0;

beforeAll(async () => {
  stack = await startConsoleStack();
});

afterAll(async () => {
  await stack?.close();
});

/** Hidden and bidirectional characters that make "refund 1.00 $" out of what is stored. */
const SPOOF = 'refund \u202E$ 00.1\u202C';
const SPOOF_SHOWN = 'refund \\u{202E}$ 00.1\\u{202C}';

/** A needs_manual issue_refund case of `tenant`; `text` goes into its arguments, error and note. */
async function caseOf(tenant: string, text = 'damaged'): Promise<ReconciliationCase> {
  n += 1;
  const idempotencyKey = uniqueName(`idem${n}`);
  const args = { order_id: 'O-5512', amount: 12.5, reason: text };
  const dl = deadLetteredRefund({
    callId: uniqueName(`call${n}`),
    providerCallId: `prov-${n}`,
    idempotencyKey,
    deadLetterId: uniqueName('dl'),
    replyTopic: stack.topics.results,
    arguments: args,
    nowMs: Date.now(),
    lastKnownStateJson: JSON.stringify({ toolVersion: '1.0.0' }),
  });
  const resourceKey = `${tenant}:order:O-5512`;
  const request = { ...(JSON.parse(dl.requestJson!) as object), tenant, resourceKey };
  const { case: c } = await stack.cases.openFromDeadLetter({
    ...dl,
    tenant,
    resourceKey,
    requestJson: JSON.stringify(request),
    errorMessage: `payments answered: ${text}`,
  });
  await leaveUnresolved(stack.idempotency, idempotencyKey, args, Date.now(), 3_600_000);
  const moved = await stack.cases.transition(
    c.caseId,
    { to: 'needs_manual', by: 'status-check', note: `status checks exhausted: ${text}` },
    { state: 'open', version: c.version },
  );
  if (!moved.ok) throw new Error('could not escalate the case');
  return moved.case;
}

/** A crafted form POST with the page's session cookie and CSRF token, from the console's origin. */
async function postFromPage(page: Page, path: string, fields: Record<string, string>): Promise<number> {
  const csrf = (await page.getAttribute('form[action="/logout"] input[name=_csrf]', 'value'))!;
  const response = await page.context().request.post(`${stack.url}${path}`, {
    form: { ...fields, _csrf: csrf },
    headers: { origin: stack.url },
    maxRedirects: 0,
  });
  return response.status();
}

async function mainText(page: Page, path: string): Promise<{ status: number; text: string }> {
  const response = await page.goto(`${stack.url}${path}`);
  return { status: response!.status(), text: (await page.textContent('main')) ?? '' };
}

describe('tenant scoping of the ops console (Chromium, real servers)', () => {
  it("an operator of one tenant neither sees nor resolves another tenant's case: 404 like an unknown id, and the attempt is audited", async () => {
    const [mine, theirs] = [uniqueName('tenant'), uniqueName('tenant')];
    const other = await caseOf(theirs);
    const own = await caseOf(mine);
    await stack.audit.append([
      envelope(policyRefusedRecord('over limit', { tenant: mine, resourceKey: `${mine}:order:O-5512` })),
    ]);
    const bob = await stack.signedIn('bob', ['operator'], [mine]);

    for (const list of ['/cases', `/cases?tenant=${theirs}`, '/cases?state=needs_manual&tool=issue_refund']) {
      const { text } = await mainText(bob, list);
      expect(text).not.toContain(other.caseId);
    }
    expect((await mainText(bob, '/cases')).text).toContain(own.caseId);
    const deadLetters = (await mainText(bob, '/dead-letters?reason=UNRESOLVED')).text;
    expect(deadLetters).toContain(own.deadLetterId);
    expect(deadLetters).not.toContain(other.deadLetterId);

    const unknownId = uniqueName('case');
    const unknown = await mainText(bob, `/cases/${unknownId}`);
    const foreign = await mainText(bob, `/cases/${other.caseId}`);
    expect(unknown.status).toBe(404);
    expect(foreign.status).toBe(404);
    expect(foreign.text.replace(other.caseId, 'ID')).toBe(unknown.text.replace(unknownId, 'ID'));

    expect(
      await postFromPage(bob, `/cases/${other.caseId}/resolve`, { outcome: 'failed', note: 'not ours' }),
    ).toBe(404);
    expect(await postFromPage(bob, `/cases/${other.caseId}/redrive`, { note: 'again' })).toBe(404);
    expect((await stack.cases.get(other.caseId))?.version).toBe(other.version);

    // Each attempt is in the other tenant's audit chain, under bob, refused; no resolution by bob.
    const attempts = await eventually('the audited attempts', async () => {
      const rows = await stack.audit.query({ principalId: 'operator:bob', tenant: theirs });
      return rows.length >= 3 ? rows : undefined;
    });
    expect(attempts.map((r) => r.record.outcome)).toEqual(['UNAUTHORIZED', 'UNAUTHORIZED', 'UNAUTHORIZED']);
    expect(attempts.map((r) => r.record.decisions[0]!.reason)).toEqual([
      expect.stringContaining(`view of case ${other.caseId} refused to operator:bob`),
      expect.stringContaining(`resolve of case ${other.caseId} refused to operator:bob`),
      expect.stringContaining(`redrive of case ${other.caseId} refused to operator:bob`),
    ]);
    expect(attempts.every((r) => r.source === 'operator' && r.record.callId === other.callId)).toBe(true);

    // Audit search and chain checks are scoped too: bob's own attempts sit in the other chain.
    const audit = (await mainText(bob, '/audit?principal=operator:bob')).text;
    expect(audit).toContain('Records (0');
    const who = (await mainText(bob, `/audit?resource=${encodeURIComponent(`${theirs}:order:O-5512`)}`)).text;
    expect(who).toContain('Did (0)');
    expect(who).toContain('Tried (0)');
    expect((await mainText(bob, `/audit?tool=refund_payment&tenant=${mine}`)).text).toContain('Records (1');
    const chains = (await mainText(bob, '/chains')).text;
    expect(chains).toContain(mine);
    expect(chains).not.toContain(theirs);

    // The other tenant's operator sees the case and who tried it.
    const ann = await stack.signedIn('ann', ['viewer'], [theirs]);
    expect((await mainText(ann, `/cases/${other.caseId}`)).text).toContain('refused to operator:bob');
    expect((await mainText(ann, `/cases/${own.caseId}`)).status).toBe(404);
  });

  it('without a tenants claim an operator gets the principal’s own tenant; * gives every tenant on purpose', async () => {
    const t = uniqueName('tenant');
    const c = await caseOf(t);
    // The stack's principals are of tenant "ops": without a tenants claim, that is all they see.
    const plain = await stack.signedIn('pat', ['viewer'], null);
    expect((await mainText(plain, '/cases')).text).not.toContain(c.caseId);
    expect(await plain.textContent('header')).toContain('tenants ops');
    expect((await mainText(plain, `/cases/${c.caseId}`)).status).toBe(404);
    const root = await stack.signedIn('root', ['viewer'], ['*']);
    expect((await mainText(root, '/cases')).text).toContain(c.caseId);
    expect(await root.textContent('header')).toContain('all tenants');
    expect((await mainText(root, `/cases/${c.caseId}`)).status).toBe(200);
  });
});

describe('what the pages show and what they refuse (Chromium, real servers)', () => {
  it('a stored "refund \\u202E$ 00.1\\u202C" reads \\u{202E} on the case list, the case page, the dead letters and the audit page', async () => {
    const t = uniqueName('tenant');
    const c = await caseOf(t, SPOOF);
    await stack.audit.append([envelope(policyRefusedRecord(SPOOF, { tenant: t }))]);
    const page = await stack.signedIn('ivy', ['viewer'], [t]);
    for (const path of [
      '/cases',
      `/cases/${c.caseId}`,
      '/dead-letters',
      `/audit?tool=refund_payment&tenant=${t}`,
    ]) {
      const { status, text } = await mainText(page, path);
      expect(status, path).toBe(200);
      expect(text, path).toContain(SPOOF_SHOWN);
      expect(text, path).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
    }
    // Pretty JSON keeps its lines; the string inside it is escaped.
    const args = await page.goto(`${stack.url}/cases/${c.caseId}`).then(() => page.textContent('pre.json'));
    expect(args).toContain('\n  "reason": "refund \\u{202E}$ 00.1\\u{202C}"');
  });

  it('answers 400 with a clear message for a NUL in a filter or a case id, and a malformed %-encoding in a path', async () => {
    const page = await stack.signedIn('ivy', ['viewer'], ['*']);
    const filter = await mainText(page, '/cases?tool=issue%00refund');
    expect(filter.status).toBe(400);
    expect(filter.text).toContain('NUL character');
    const id = await mainText(page, '/cases/c%00-1');
    expect(id.status).toBe(400);
    expect(id.text).toContain('NUL character');
    const encoding = await page.context().request.get(`${stack.url}/cases/%E0%A4%A`, { maxRedirects: 0 });
    expect(encoding.status()).toBe(400);
    expect(await encoding.text()).toContain('malformed %-encoding');
    const audit = await mainText(page, '/audit?resource=%00');
    expect(audit.status).toBe(400);
  });
});

describe('what an operator expects of a console (Chromium, real servers)', () => {
  it('pages and sorts a list, counts cases per state, and searches call id, trace id, tool and error text', async () => {
    const t = uniqueName('tenant');
    const opened: ReconciliationCase[] = [];
    for (let i = 0; i < 53; i++) {
      const dl = deadLetter({
        tenant: t,
        createdAtMs: Date.now() - 60_000 + i,
        ...(i === 7 ? { traceId: 'feedfacefeedfacefeedfacefeedface' } : {}),
        ...(i === 9 ? { errorMessage: 'Bank said: ACCOUNT_FROZEN for this order' } : {}),
      });
      opened.push((await stack.cases.openFromDeadLetter(dl)).case);
    }
    await stack.cases.transition(
      opened[2]!.caseId,
      { to: 'needs_manual', by: 'status-check', note: 'gave up' },
      'open',
    );
    const page = await stack.signedIn('lia', ['viewer'], [t]);
    const rows = async () => page.locator('tbody tr td:first-child a').allTextContents();
    await page.goto(`${stack.url}/cases`);
    expect(await page.textContent('nav.tabs')).toMatch(/any\s*53\s*open\s*52\s*needs_manual\s*1/);
    expect(await rows()).toEqual(opened.slice(0, 50).map((c) => c.caseId));
    expect(await page.textContent('.pager')).toContain('Rows 1–50');
    await page.click('a[rel=next]');
    expect(await rows()).toEqual(opened.slice(50).map((c) => c.caseId));
    expect(await page.locator('a[rel=next]').count()).toBe(0);
    await page.click('a[rel=prev]');
    expect((await rows())[0]).toBe(opened[0]!.caseId);
    await page.selectOption('select[name=sort]', 'newest');
    await page.click('button:has-text("Filter")');
    expect((await rows()).slice(0, 2)).toEqual([opened[52]!.caseId, opened[51]!.caseId]);
    await page.click('a.tab:has-text("needs_manual")');
    expect(await rows()).toEqual([opened[2]!.caseId]);
    for (const [q, expected] of [
      [opened[4]!.callId!, [opened[4]!.caseId]],
      ['FEEDFACEFEEDFACE', [opened[7]!.caseId]],
      ['account_frozen', [opened[9]!.caseId]],
    ] as const) {
      await page.goto(`${stack.url}/cases?q=${encodeURIComponent(q)}`);
      expect(await rows(), q).toEqual(expected);
    }
    await page.goto(`${stack.url}/dead-letters?q=account_frozen`);
    expect(await page.textContent('main')).toContain(opened[9]!.deadLetterId);
    expect(await page.textContent('nav.tabs')).toMatch(/any\s*1\s*open\s*1/);
  });

  it('pages and sorts audit search results', async () => {
    const t = uniqueName('tenant');
    const envs = Array.from({ length: 55 }, (_, i) =>
      envelope(policyRefusedRecord(`refusal number ${i}`, { tenant: t }), { recordedAtMs: 1_000_000 + i }),
    );
    await stack.audit.append(envs);
    const page = await stack.signedIn('ada', ['viewer'], [t]);
    const reasons = async () => page.locator('h2:has-text("Records") + p + table td.note').allTextContents();
    await page.goto(`${stack.url}/audit?tool=refund_payment&tenant=${t}`);
    expect(await page.textContent('h2:has-text("Records")')).toContain('Records (1–50, newest first)');
    let shown = await reasons();
    expect(shown).toHaveLength(50);
    expect(shown[0]).toContain('refusal number 54');
    await page.click('a[rel=next]');
    shown = await reasons();
    expect(shown.map((r) => r.match(/number (\d+)/)![1])).toEqual(['4', '3', '2', '1', '0']);
    await page.click('a:has-text("oldest first")');
    shown = await reasons();
    expect(shown).toHaveLength(50);
    expect(shown[0]).toContain('refusal number 0');
  });

  it('resolves selected cases in bulk with one reason, each scoped and audited, and a reload re-posts nothing', async () => {
    const [t, other] = [uniqueName('tenant'), uniqueName('tenant')];
    const [a, b, c] = [await caseOf(t), await caseOf(t), await caseOf(t)];
    const foreign = await caseOf(other);
    const page = await stack.signedIn('max', ['operator'], [t]);
    await page.goto(`${stack.url}/cases?state=needs_manual`);
    await page.check(`input[name=case][value="${a.caseId}"]`);
    await page.check(`input[name=case][value="${b.caseId}"]`);
    await page.selectOption('select[name=action]', 'resolve-failed');
    await page.fill('form#bulk textarea[name=note]', 'bank confirms none of these refunds left');
    await page.click('button:has-text("Apply to the selected cases")');
    await page.waitForURL(/\/cases\?done=bulk/);
    expect(await page.textContent('[role=status]')).toContain('2 done, 0 refused');
    for (const x of [a, b]) expect((await stack.cases.get(x.caseId))?.state).toBe('resolved_failed');
    expect((await stack.cases.get(c.caseId))?.version).toBe(c.version);
    await page.reload();
    for (const x of [a, b]) expect((await stack.cases.get(x.caseId))?.version).toBe(x.version + 1);
    const records = await eventually('one audit record per resolved case', async () => {
      const rows = await stack.audit.query({ principalId: 'operator:max', tenant: t });
      return rows.length >= 2 ? rows : undefined;
    });
    expect(records.map((r) => r.record.callId).sort()).toEqual([a.callId, b.callId].sort());

    // A crafted bulk post naming another tenant's case: that one is refused like an unknown id.
    const csrf = (await page.getAttribute('form[action="/logout"] input[name=_csrf]', 'value'))!;
    const crafted = await page.context().request.post(`${stack.url}/cases/bulk`, {
      data: `_csrf=${csrf}&action=resolve-failed&note=all&case=${c.caseId}&case=${foreign.caseId}`,
      headers: { origin: stack.url, 'content-type': 'application/x-www-form-urlencoded' },
      maxRedirects: 0,
    });
    expect(crafted.status()).toBe(303);
    expect(crafted.headers().location).toContain('ok=1&refused=1');
    expect((await stack.cases.get(foreign.caseId))?.version).toBe(foreign.version);
    expect((await stack.cases.get(c.caseId))?.state).toBe('resolved_failed');
    await eventually('the refused attempt audited', async () => {
      const rows = await stack.audit.query({ principalId: 'operator:max', tenant: other });
      return rows.length === 1 && rows[0]!.record.outcome === 'UNAUTHORIZED' ? rows : undefined;
    });

    // One case's own form redirects too: the page after it is a GET that a reload repeats harmlessly.
    const d = await caseOf(t);
    await page.goto(`${stack.url}/cases/${d.caseId}`);
    await page.fill('form[action$="/resolve"] textarea[name=note]', 'ledger shows it');
    await page.click('button:has-text("Resolve")');
    await page.waitForURL(`${stack.url}/cases/${d.caseId}?done=resolved`);
    expect(await page.textContent('[role=status]')).toContain('Resolved: the case is now resolved_succeeded');
    const after = (await stack.cases.get(d.caseId))!.version;
    await page.reload();
    expect((await stack.cases.get(d.caseId))!.version).toBe(after);
  });

  it('shows times in the chosen zone, attempt times as times, the trace id as a link, and a poison letter’s raw payload', async () => {
    const t = uniqueName('tenant');
    const startedAtMs = Date.UTC(2026, 11, 6, 9, 30, 0);
    const c = (
      await stack.cases.openFromDeadLetter(
        deadLetter({
          tenant: t,
          traceId: 'abcdefabcdefabcdefabcdefabcdef01',
          attemptsJson: JSON.stringify([{ attempt: 1, startedAtMs, durationMs: 1500, result: 'TIMEOUT' }]),
        }),
      )
    ).case;
    const page = await stack.signedIn('zoe', ['viewer'], [t]);
    await page.goto(`${stack.url}/cases/${c.caseId}`);
    const attempts = await page.locator('h2:has-text("Attempts") + table').textContent();
    expect(attempts).toContain('2026-12-06 09:30:00Z');
    expect(attempts).toContain('1500 ms');
    expect(attempts).not.toContain(String(startedAtMs));
    expect(await page.getAttribute('a:has-text("abcdefabcdefabcdefabcdefabcdef01")', 'href')).toBe(
      'https://tempo.example/trace/abcdefabcdefabcdefabcdefabcdef01?from=console',
    );
    await page.fill('header input[name=tz]', 'Europe/Berlin');
    await page.click('button:has-text("Set time zone")');
    await page.goto(`${stack.url}/cases/${c.caseId}`);
    expect(await page.locator('h2:has-text("Attempts") + table').textContent()).toContain(
      '2026-12-06 10:30:00 GMT+1',
    );
    const bad = await page.context().request.post(`${stack.url}/prefs`, {
      form: {
        _csrf: (await page.getAttribute('form[action="/logout"] input[name=_csrf]', 'value'))!,
        tz: 'Mars/Olympus',
      },
      headers: { origin: stack.url },
      maxRedirects: 0,
    });
    expect(bad.status()).toBe(400);

    // A poison letter without a tenant: its raw bytes for an operator of every tenant only.
    const payload = Buffer.concat([
      Buffer.from('{"tool":"issue_refund","x":"'),
      Buffer.from(SPOOF),
      Buffer.from([0xff, 0x00]),
    ]);
    const poison = (
      await stack.cases.openFromDeadLetter(
        deadLetter({
          callId: null,
          reason: 'POISON',
          tenant: null,
          tool: null,
          deadLetterId: uniqueName('dl'),
          rawPayloadBase64: payload.toString('base64'),
        }),
      )
    ).case;
    const root = await stack.signedIn('root', ['viewer'], ['*']);
    await root.goto(`${stack.url}/dead-letters?reason=POISON&q=${poison.deadLetterId}`);
    await root.click('a:has-text("raw payload")');
    const raw = (await root.textContent('main'))!;
    expect(raw).toContain(`${payload.length} bytes`);
    expect(raw).toContain('7b 22 74 6f 6f 6c 22 3a');
    expect(raw).toContain(SPOOF_SHOWN);
    expect(raw).not.toMatch(/[\u202A-\u202E]/);
    expect((await mainText(page, `/cases/${poison.caseId}/raw`)).status).toBe(404);
  });
});

describe('the console when its Postgres pool is saturated', () => {
  let server: Server;
  let url: string;
  let pool: pg.Pool;
  const registry = new Registry();

  beforeAll(async () => {
    // One connection, waited for 200 ms: a test can hold it and see what the next request gets.
    pool = new pg.Pool({
      connectionString: databaseUrlFor(stack.db.schema),
      max: 1,
      connectionTimeoutMillis: 200,
    });
    const cases = new PostgresCaseStore(pool, systemClock);
    const audit = new PostgresAuditStore(pool);
    const delivery = {
      publisher: new MemoryEventBus(),
      codec: new LocalEventCodec(),
      topics: topicNames(uniqueName('unused')),
      idempotency: new MemoryIdempotencyStore(systemClock),
      clock: systemClock,
      logger: silentLogger,
      backoff: DEFAULT_BACKOFF,
      replyTopics: {},
      resultTtlMs: 60_000,
    };
    const handler = createConsoleHandler({
      operations: {
        listCases: (f) => cases.list(f),
        showCase: () => Promise.resolve(undefined),
        resolveByHand: () => Promise.reject(new Error('not in this test')),
        redrive: () => Promise.reject(new Error('not in this test')),
      },
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
      tokens: undefined,
      devLogin: true,
      origin: 'http://console.test',
      clock: systemClock,
      logger: silentLogger,
      delivery,
      metrics: createConsoleMetrics(registry),
    });
    server = createServer((req, res) => void handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await pool?.end();
  });

  const shed = async (): Promise<number> =>
    (await registry.getSingleMetric('toolgate_ops_console_overloaded_total')!.get()).values[0]?.value ?? 0;

  it('answers 503 with Retry-After while every connection is held, counts it, and serves again once one is free', async () => {
    const login = await fetch(`${url}/login/dev`, {
      method: 'POST',
      headers: { origin: 'http://console.test', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ operator: 'sat', role: 'viewer', tenants: '*' }),
      redirect: 'manual',
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';', 1)[0]!;
    const get = () => fetch(`${url}/cases`, { headers: { cookie }, redirect: 'manual' });
    expect((await get()).status).toBe(200);
    const before = await shed();

    const held = await pool.connect();
    try {
      const answers = await Promise.all(Array.from({ length: 8 }, get));
      for (const answer of answers) {
        expect(answer.status).toBe(503);
        expect(answer.headers.get('retry-after')).toBe('5');
        expect(await answer.text()).toContain('no database connection was free in time');
      }
      expect(await shed()).toBe(before + 8);
    } finally {
      held.release();
    }
    expect((await get()).status).toBe(200);
    expect(await shed()).toBe(before + 8);
  });
});

import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresSingleUseStore } from '../../../libs/adapters/postgres/single-use-store.js';
import { RedisIdempotencyStore } from '../../../libs/adapters/redis/redis-idempotency-store.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { ExecutionContext, NormalizedToolCall } from '../../../libs/core/types.js';
import { RegistryEventCodec } from '../../../libs/events/registry-codec.js';
import type { ReconciliationCase } from '../../../libs/ports/case-store.js';
import type { PurchaseOrderApi } from '../../../services/catalog/tools/purchase-order-backend.js';
import type { PreviewPurchaseOrderOutput } from '../../../services/catalog/tools/purchase-order-preview.js';
import { toAuditEvent } from '../../../libs/runtime/audit-event.js';
import { schemaRegistryUrl } from '../../helpers/env.js';
import { deadLetteredRefund, leaveUnresolved } from '../../helpers/dead-lettered-refund.js';
import { uniqueName } from '../../helpers/names.js';
import { purchasingAgent, purchasingParts, purchasingPipeline } from '../../helpers/stack-purchasing.js';
import { eventually, startConsoleStack, type ConsoleStack } from './console-stack.js';

/**
 * The ops console in headless Chromium against the real servers: cases in Postgres, idempotency
 * records in Redis, audit records through Kafka and the audit sink into Postgres. Each test makes
 * its own cases and previews; negatives are proved by counting (case versions, audit records,
 * messages on the calls topic, tool invocations).
 */
const DOCS = fileURLToPath(new URL('../../../services/ops-console/docs/', import.meta.url));
const ARGS = { order_id: 'O-5512', amount: 12.5, reason: 'damaged' };
let stack: ConsoleStack;
let n = 0;

beforeAll(async () => {
  stack = await startConsoleStack();
  await mkdir(DOCS, { recursive: true });
});

afterAll(async () => {
  await stack?.close();
});

/** A needs_manual case for a dead-lettered issue_refund whose outcome is unknown (UNRESOLVED in Redis). */
async function unresolvedRefund(): Promise<ReconciliationCase> {
  n += 1;
  const idempotencyKey = uniqueName(`idem${n}`);
  const { case: c } = await stack.cases.openFromDeadLetter(
    deadLetteredRefund({
      callId: uniqueName(`call${n}`),
      providerCallId: `prov-${n}`,
      idempotencyKey,
      deadLetterId: uniqueName('dl'),
      replyTopic: stack.topics.results,
      arguments: ARGS,
      nowMs: Date.now(),
      lastKnownStateJson: JSON.stringify({ toolVersion: '1.0.0' }),
    }),
  );
  await leaveUnresolved(stack.idempotency, idempotencyKey, ARGS, Date.now(), 3_600_000);
  const moved = await stack.cases.transition(
    c.caseId,
    {
      to: 'needs_manual',
      by: 'status-check',
      note: 'status checks exhausted: the payments service never answered, so only a person can tell',
    },
    { state: 'open', version: c.version },
  );
  if (!moved.ok) throw new Error('could not escalate the case');
  return moved.case;
}

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
    const c = await unresolvedRefund();
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
    const c = await unresolvedRefund();
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
    const c = await unresolvedRefund();
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
    // The same form with the page's own token goes through.
    expect(
      await postFromPage(page, `/cases/${c.caseId}/resolve`, { ...fields, _csrf: await csrfOf(page) }),
    ).toBe(200);
    expect((await stack.cases.get(c.caseId))?.state).toBe('resolved_failed');
  });

  it('approves a preview waiting for a person: the confirm then places the order once', async () => {
    const buy = await purchasing(stack);
    const args = { sku: 'SKU-21', quantity: 4, supplier_id: 'SUP-2' };
    const preview = await buy.run('preview_purchase_order', args);
    const p = preview.result.payload as PreviewPurchaseOrderOutput;
    expect(p.requires_approval).toBe(true);
    const confirm: NormalizedToolCall = {
      id: uniqueName('call'),
      name: 'create_purchase_order',
      arguments: { ...args, preview_token: p.preview_token },
    };
    const ctx = buy.ctx();
    const waiting = await buy.pipeline.run(confirm, ctx);
    expect(waiting.result.outcome).toBe('POLICY_VIOLATION');
    await buy.publishAudit(waiting.audit, `${confirm.id}:1`);

    const page = await stack.signedIn('mia', ['approver']);
    await eventually('the preview in the queue', async () => {
      await page.goto(`${stack.url}/approvals`);
      return (await page.textContent('main'))?.includes(p.preview_id) ? true : undefined;
    });
    const queue = await page.textContent('main');
    expect(queue).toContain('agent:purchasing');
    expect(queue).toContain('SKU-21');
    expect(queue).not.toContain(p.preview_token);
    await page.screenshot({ path: `${DOCS}approvals.png`, fullPage: true });
    expect(buy.created()).toBe(0);
    await page.fill('textarea[name=reason]', 'restock before the weekend');
    await page.click('button:has-text("Approve")');
    expect(await page.textContent('[role=status]')).toContain(`preview ${p.preview_id} approved`);
    expect(await page.textContent('main')).toContain('Nothing waits for approval.');

    const placed = await buy.pipeline.run(confirm, ctx);
    expect(placed.result.outcome).toBe('SUCCESS');
    expect(placed.result.payload).toMatchObject({ approved_by: 'operator:mia' });
    const replay = await buy.pipeline.run({ ...confirm, id: uniqueName('call') }, buy.ctx());
    expect(replay.result.error?.message).toContain('already used');
    expect(buy.created()).toBe(1);
    const [decision] = await eventually('the approval audit record', async () => {
      const rows = await stack.audit.query({ principalId: 'operator:mia' });
      return rows.length > 0 ? rows : undefined;
    });
    expect(decision).toMatchObject({
      source: 'operator',
      record: { callId: waiting.audit.callId, tool: 'create_purchase_order' },
    });
    expect(decision!.record.decisions[0]!.reason).toContain(
      `preview ${p.preview_id} approved by operator:mia: restock before the weekend`,
    );
    // A rejected preview's token is used up: the confirm is refused, after approval too, and places nothing.
    const second = (await buy.run('preview_purchase_order', args)).result
      .payload as PreviewPurchaseOrderOutput;
    const confirm2: NormalizedToolCall = {
      id: uniqueName('call'),
      name: 'create_purchase_order',
      arguments: { ...args, preview_token: second.preview_token },
    };
    const ctx2 = buy.ctx();
    await buy.publishAudit((await buy.pipeline.run(confirm2, ctx2)).audit, `${confirm2.id}:1`);
    await eventually('the second preview in the queue', async () => {
      await page.goto(`${stack.url}/approvals`);
      return (await page.textContent('main'))?.includes(second.preview_id) ? true : undefined;
    });
    await page.fill('textarea[name=reason]', 'supplier on hold');
    await page.click('button:has-text("Reject")');
    expect(await page.textContent('[role=status]')).toContain(`preview ${second.preview_id} rejected`);
    const refused = await buy.pipeline.run(confirm2, ctx2);
    expect(refused.result.outcome).not.toBe('SUCCESS');
    expect(buy.created()).toBe(1);
    await buy.close();
  });
});

/** A purchasing agent's calls through a real guard pipeline on the console's database and the shared Redis. */
async function purchasing(s: ConsoleStack) {
  const clock = systemClock;
  let creates = 0;
  const purchasing = await purchasingParts(s.db.pool, {
    clock,
    key: { alg: 'HS256', secret: randomBytes(32) },
    singleUse: new PostgresSingleUseStore(s.db.pool),
    purchaseOrders: (orders): PurchaseOrderApi => ({
      supplier: (tenant, id) => orders.supplier(tenant, id),
      findByReference: (tenant, reference) => orders.findByReference(tenant, reference),
      list: (tenant) => orders.list(tenant),
      create: (request) => {
        creates += 1;
        return orders.create(request);
      },
    }),
  });
  const { pipeline, breakers } = purchasingPipeline(purchasing, {
    clock,
    owner: 'executor-1',
    idempotency: new RedisIdempotencyStore(s.redis.redis, { keyPrefix: s.redis.prefix }),
  });
  const ctx = (): ExecutionContext => ({
    principal: purchasingAgent,
    tenant: 't1',
    taskId: uniqueName('task'),
    step: 0,
    index: 0,
    traceId: randomBytes(16).toString('hex'),
  });
  const codec = await RegistryEventCodec.create({ url: schemaRegistryUrl(), topics: s.topics });
  const producer = s.kafka.producer();
  await producer.connect();
  return {
    pipeline,
    ctx,
    created: () => creates,
    run: (name: string, args: Record<string, unknown>) =>
      pipeline.run({ id: uniqueName('call'), name, arguments: args }, ctx()),
    /** Publishes an attempt's audit record as the executor does (the audit sink stores it). */
    async publishAudit(record: Parameters<typeof toAuditEvent>[0], recordId: string) {
      const event = toAuditEvent(record, { recordId, producerId: 'executor-1' });
      await producer.send({
        topic: s.topics.audit,
        messages: [{ key: event.tenant, value: Buffer.from(await codec.encode('audit', event)) }],
      });
    },
    async close() {
      breakers.shutdown();
    },
  };
}

import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEnvelope } from '../../../libs/ports/audit-store.js';
import type { PreviewPurchaseOrderOutput } from '../../../services/catalog/tools/purchase-order-preview.js';
import { agentPrincipal } from '../../helpers/principals.js';
import { purchasingAgent } from '../../helpers/stack-purchasing.js';
import { eventually, startConsoleStack, type ConsoleStack } from './console-stack.js';
import { purchasingOn } from './console-purchasing.js';

/**
 * The approvals queue in headless Chromium against the real servers: the preview gate records each
 * approval request in Postgres itself, the audit log fills through Kafka and the audit sink, and the
 * console lists and decides from the approval store. Negatives are proved by counting: rows with the
 * request's id, orders the purchasing service was asked to place.
 */
const DOCS = fileURLToPath(new URL('../../../services/ops-console/docs/', import.meta.url));
/** 4 × SKU-21 from SUP-2: above $1,000, below $10,000, so one person must approve. */
const ORDER = { sku: 'SKU-21', quantity: 4, supplier_id: 'SUP-2' };
let stack: ConsoleStack;
let buy: Awaited<ReturnType<typeof purchasingOn>>;

beforeAll(async () => {
  stack = await startConsoleStack();
  buy = await purchasingOn(stack);
  await mkdir(DOCS, { recursive: true });
});

afterAll(async () => {
  await buy?.close();
  await stack?.close();
});

/** Previews ORDER as `principal` and confirms it once: the gate records the request and refuses the call. */
async function waitingOrder(principal = purchasingAgent, order: Record<string, unknown> = ORDER) {
  const preview = await buy.run('preview_purchase_order', order, principal);
  const p = preview.result.payload as PreviewPurchaseOrderOutput;
  expect(p.requires_approval).toBe(true);
  const confirm = buy.confirmCall(order, p.preview_token);
  const ctx = buy.ctx(principal);
  const waiting = await buy.pipeline.run(confirm, ctx);
  expect(waiting.result.outcome).toBe('POLICY_VIOLATION');
  expect(waiting.result.error?.message).toContain('awaiting approval');
  await buy.publishAudit(waiting.audit, `${confirm.id}:1`);
  return { p, confirm, ctx, refusal: waiting.result.error!.message };
}

/** The rows of the pending queue (every page) that name request `id`, and their requester cells. */
async function queueRows(page: Page, id: string): Promise<string[]> {
  const requesters: string[] = [];
  let next: string | null = `${stack.url}/approvals?state=pending`;
  while (next !== null) {
    await page.goto(next);
    const row = page.locator(`tr[data-request="${id}"]`);
    for (let i = 0; i < (await row.count()); i++) {
      requesters.push((await row.nth(i).locator('.requester').textContent()) ?? '');
    }
    const link = page.locator('a:has-text("Next page")');
    next =
      (await link.count()) === 0 ? null : new URL((await link.getAttribute('href'))!, stack.url).toString();
  }
  return requesters;
}

/**
 * Opens request `id`'s decision page and submits `verdict` with `reason`; answers the HTTP status of
 * the page the browser ends on (a decision redirects to the request's page: 200; a refusal: 409).
 */
async function decide(
  page: Page,
  id: string,
  verdict: 'Approve' | 'Reject',
  reason: string,
): Promise<number> {
  await page.goto(`${stack.url}/approvals/${encodeURIComponent(id)}`);
  await page.fill('textarea[name=reason]', reason);
  const [response] = await Promise.all([
    page.waitForNavigation(),
    page.click(`button:has-text("${verdict}")`),
  ]);
  return response!.status();
}

describe('the approvals queue in Chromium on the real servers', () => {
  it('approves a waiting order from its decision page: the confirm then places it once', async () => {
    const w = await waitingOrder();
    const page = await stack.signedIn('mia', ['approver']);
    expect(await queueRows(page, w.p.preview_id)).toEqual(['agent:purchasing']);
    await page.goto(`${stack.url}/approvals/${w.p.preview_id}`);
    expect(await page.textContent('.requester')).toBe('agent:purchasing');
    expect(await page.textContent('.on-behalf-of')).toBe('W-1');
    expect(await page.textContent('.reason')).toContain("orders above $1,000 need a manager's approval");
    expect(await page.textContent('.reason')).toContain(
      `this order totals $${w.p.total.toLocaleString('en-US')}`,
    );
    // The call as an MCP confirmation would put it: decisive fields first, each on its own line.
    const shown = (await page.textContent('.presented-call'))!.split('\n');
    expect(shown[0]).toBe('Call create_purchase_order (version 1.0.0) with:');
    expect(shown.slice(1, 4)).toEqual([
      `sku: ${w.confirm.arguments.sku as string}`,
      `quantity: ${String(w.confirm.arguments.quantity)}`,
      `supplier_id: ${w.confirm.arguments.supplier_id as string}`,
    ]);
    expect(await page.textContent('main')).not.toContain(w.p.preview_token);
    await page.screenshot({ path: `${DOCS}approvals.png`, fullPage: true });
    expect(buy.created()).toBe(0);

    expect(await decide(page, w.p.preview_id, 'Approve', 'restock before the weekend')).toBe(200);
    expect(await page.textContent('[role=status]')).toContain(`request ${w.p.preview_id} approved`);
    const placed = await buy.pipeline.run(w.confirm, w.ctx);
    expect(placed.result.outcome).toBe('SUCCESS');
    expect(placed.result.payload).toMatchObject({ approved_by: 'mia' });
    const replay = await buy.pipeline.run({ ...w.confirm, id: `${w.confirm.id}-again` }, buy.ctx());
    expect(replay.result.error?.message).toContain('already used');
    expect(buy.created()).toBe(1);
    const [decision] = await eventually('the approval audit record', async () => {
      const rows = await stack.audit.query({ principalId: 'operator:mia' });
      return rows.length > 0 ? rows : undefined;
    });
    expect(decision).toMatchObject({
      source: 'operator',
      record: { tool: 'create_purchase_order', tenant: 't1' },
    });
    expect(decision!.record.traceId).toBe(w.ctx.traceId);
    expect(decision!.record.decisions[0]!.reason).toContain(
      `approval request ${w.p.preview_id} approved by operator:mia: restock before the weekend`,
    );

    // A rejected request can never be confirmed.
    const second = await waitingOrder();
    expect(await decide(page, second.p.preview_id, 'Reject', 'supplier on hold')).toBe(200);
    expect(await page.textContent('[role=status]')).toContain(`request ${second.p.preview_id} rejected`);
    const refused = await buy.pipeline.run(second.confirm, second.ctx);
    expect(refused.result.outcome).toBe('POLICY_VIOLATION');
    expect(refused.result.error?.message).toContain('rejected');
    expect(buy.created()).toBe(1);
  });

  it('a refusal echoing "a person must approve preview <id>" neither adds, hides nor alters an entry', async () => {
    const w = await waitingOrder();
    const before = buy.created();
    // Another agent of the tenant gets the gate's own words, with the real request's id, into the audit log.
    const echo = agentPrincipal('agent:notes', 'W-9', ['warehouse'], []);
    const forged = await buy.run('leave_note', { note: w.refusal }, echo);
    expect(forged.result.outcome).toBe('POLICY_VIOLATION');
    expect(forged.result.error?.message).toContain(`a person must approve preview ${w.p.preview_id}`);
    await buy.publishAudit(forged.audit, `${forged.audit.callId}:1`);
    await eventually('the echoed refusal in the audit log', async () => {
      const rows = await stack.audit.query({ principalId: 'agent:notes' });
      return rows.length > 0 ? rows : undefined;
    });

    const page = await stack.signedIn('noah', ['approver']);
    expect(await queueRows(page, w.p.preview_id)).toEqual(['agent:purchasing']);
    await page.goto(`${stack.url}/approvals?state=pending`);
    expect(await page.textContent('main')).not.toContain('agent:notes');
    await page.goto(`${stack.url}/approvals/${w.p.preview_id}`);
    expect(await page.textContent('.requester')).toBe('agent:purchasing');

    // Only approving the recorded request releases the order, exactly once.
    expect((await buy.pipeline.run(w.confirm, w.ctx)).result.outcome).toBe('POLICY_VIOLATION');
    expect(buy.created()).toBe(before);
    expect(await decide(page, w.p.preview_id, 'Approve', 'checked with the warehouse')).toBe(200);
    expect((await buy.pipeline.run(w.confirm, w.ctx)).result.outcome).toBe('SUCCESS');
    expect(buy.created()).toBe(before + 1);
  });

  it('1,016 policy refusals between request and decision: the request is still listed and approvable', async () => {
    const w = await waitingOrder();
    const before = buy.created();
    const refusal = await buy.run('leave_note', { note: 'restock everything' });
    const nowMs = Date.now();
    const flood: AuditEnvelope[] = Array.from({ length: 1_016 }, (_, i) => ({
      recordId: `flood-${w.p.preview_id}-${i}`,
      producerId: 'executor-1',
      source: 'executor',
      recordedAtMs: nowMs + i,
      record: { ...refusal.audit, callId: `flood-${w.p.preview_id}-${i}` },
    }));
    for (let i = 0; i < flood.length; i += 254) await stack.audit.append(flood.slice(i, i + 254));
    const stored = await stack.audit.query({ outcome: 'POLICY_VIOLATION', fromMs: nowMs, limit: 2_000 });
    expect(stored.length).toBeGreaterThanOrEqual(1_016);

    const page = await stack.signedIn('olga', ['approver']);
    expect(await queueRows(page, w.p.preview_id)).toEqual(['agent:purchasing']);
    expect(await decide(page, w.p.preview_id, 'Approve', 'approved in a busy hour')).toBe(200);
    expect((await buy.pipeline.run(w.confirm, w.ctx)).result.outcome).toBe('SUCCESS');
    expect(buy.created()).toBe(before + 1);
  });

  it('the user the agent acts for, and the agent, cannot approve: refused, nothing placed; the page shows for whom and the total', async () => {
    const bot = agentPrincipal('warehouse-bot:2', 'W-2', ['warehouse'], ['purchase_orders:write']);
    const w = await waitingOrder(bot);
    const before = buy.created();
    const ordersBefore = (await buy.orders.list('t1')).length;

    const owner = await stack.signedIn('W-2', ['approver']);
    await owner.goto(`${stack.url}/approvals/${w.p.preview_id}`);
    expect(await owner.textContent('.requester')).toBe('warehouse-bot:2');
    expect(await owner.textContent('.on-behalf-of')).toBe('W-2');
    expect(await owner.textContent('.reason')).toContain(
      `this order totals $${w.p.total.toLocaleString('en-US')}`,
    );
    expect(await decide(owner, w.p.preview_id, 'Approve', 'my own order')).toBe(409);
    expect(await owner.textContent('[role=status]')).toContain('the action is done on your behalf');

    const agent = await stack.signedIn('warehouse-bot:2', ['approver']);
    expect(await decide(agent, w.p.preview_id, 'Approve', 'looks fine to me')).toBe(409);
    expect(await agent.textContent('[role=status]')).toContain('you asked for this action yourself');

    const confirmed = await buy.pipeline.run(w.confirm, w.ctx);
    expect(confirmed.result.outcome).toBe('POLICY_VIOLATION');
    expect(buy.created()).toBe(before);
    expect((await buy.orders.list('t1')).length).toBe(ordersBefore);
    expect((await buy.approvals.get(w.p.preview_id))?.state).toBe('pending');
    expect(await queueRows(owner, w.p.preview_id)).toEqual(['warehouse-bot:2']);
  });

  it('an order above $10,000 needs two different people: one approval, or the same person twice, releases nothing', async () => {
    const w = await waitingOrder(purchasingAgent, { ...ORDER, quantity: 40 });
    expect(w.p.total).toBeGreaterThan(10_000);
    const before = buy.created();
    const mia = await stack.signedIn('mia', ['approver']);
    await mia.goto(`${stack.url}/approvals/${w.p.preview_id}`);
    expect(await mia.textContent('.reason')).toContain(
      'orders above $10,000 need the approval of two different people',
    );
    expect(await decide(mia, w.p.preview_id, 'Approve', 'first pair of eyes')).toBe(200);
    expect(await mia.textContent('[role=status]')).toContain('1 more needed');
    expect((await buy.pipeline.run(w.confirm, w.ctx)).result.outcome).toBe('POLICY_VIOLATION');
    expect(await decide(mia, w.p.preview_id, 'Approve', 'again')).toBe(409);
    expect(await mia.textContent('[role=status]')).toContain('needs the approval of a different person');
    expect(buy.created()).toBe(before);

    const noah = await stack.signedIn('noah', ['approver']);
    expect(await decide(noah, w.p.preview_id, 'Approve', 'second pair of eyes')).toBe(200);
    const placed = await buy.pipeline.run(w.confirm, w.ctx);
    expect(placed.result.outcome).toBe('SUCCESS');
    expect(placed.result.payload).toMatchObject({ approved_by: 'mia, noah' });
    expect(buy.created()).toBe(before + 1);
  });
  it('an approver of another tenant gets 404 like an unknown id, the attempt is audited, and a reload after a decision re-posts nothing', async () => {
    const w = await waitingOrder();
    const id = w.p.preview_id;
    const other = await stack.signedIn('otto', ['approver'], ['t2']);
    const unknown = await other.goto(`${stack.url}/approvals/no-such-request`);
    const unknownText = await other.textContent('main');
    const theirs = await other.goto(`${stack.url}/approvals/${id}`);
    expect([unknown?.status(), theirs?.status()]).toEqual([404, 404]);
    expect(await other.textContent('main')).toBe(unknownText!.replace('no-such-request', id));
    expect(await queueRows(other, id)).toEqual([]);
    const attempts = await eventually('the audited attempt', async () => {
      const rows = await stack.audit.query({ principalId: 'operator:otto', tenant: 't1' });
      return rows.length > 0 ? rows : undefined;
    });
    expect(attempts[0]!.record).toMatchObject({ outcome: 'UNAUTHORIZED', callId: `approval:${id}` });
    expect(attempts[0]!.record.decisions[0]!.reason).toContain(`view of approval request ${id} refused`);

    const mia = await stack.signedIn('mia', ['approver']);
    expect(await decide(mia, id, 'Approve', 'fine')).toBe(200);
    expect(mia.url()).toBe(`${stack.url}/approvals/${id}?done=decided`);
    expect(await mia.textContent('[role=status]')).toContain(`request ${id} approved`);
    await mia.reload();
    expect(await mia.textContent('[role=status]')).toContain(`request ${id} approved`);
    const transitions = await mia.locator('table tbody tr td:nth-child(3)').allTextContents();
    expect(transitions.filter((t) => t.trim() === 'approved')).toHaveLength(1);
  });
});

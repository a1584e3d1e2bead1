import { describe, expect, it } from 'vitest';
import { newApprovalRequest } from '../../../libs/patterns/approval/approval-rules.js';
import { decisionAuditEvent } from '../../../services/ops-console/approvals.js';
import { listFilters } from '../../../services/ops-console/console-app.js';
import { html, raw } from '../../../services/ops-console/html.js';

describe('html', () => {
  it('escapes every interpolated value, arrays included; only raw and nested html pass', () => {
    const evil = `"><script>alert('x')</script>`;
    expect(html`<td title="${evil}">${evil}</td>`.text).toBe(
      '<td title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;">&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;</td>',
    );
    // Through an alias: the formatter lays out templates tagged `html` as markup, and whitespace counts here.
    const tag = html;
    expect(tag`<ul>${['<a>', tag`<li>${'&'}</li>`]}</ul>`.text).toBe('<ul>&lt;a&gt;<li>&amp;</li></ul>');
    expect(html`${raw('<b>')}${null}${undefined}${false}${0}`.text).toBe('<b>0');
  });
});

describe('listFilters', () => {
  it('keeps known states, reasons and ages, trims free text, drops the rest', () => {
    const q = new URLSearchParams({
      state: 'needs_manual',
      reason: 'BOGUS',
      age: 'gt24h',
      tool: ' issue_refund ',
      tenant: '',
    });
    expect(listFilters(q)).toEqual({ state: 'needs_manual', age: 'gt24h', tool: 'issue_refund', page: 1 });
    expect(listFilters(new URLSearchParams({ state: "open' OR 1=1" }))).toEqual({ page: 1 });
    expect(listFilters(new URLSearchParams({ q: ' O-55 ', sort: 'newest', page: '3' }))).toEqual({
      q: 'O-55',
      sort: 'newest',
      page: 3,
    });
    for (const page of ['0', '-1', '1.5', 'x', '99999999'])
      expect(listFilters(new URLSearchParams({ page, sort: 'sideways' }))).toEqual({ page: 1 });
  });
});

describe('the audit record of an approval decision', () => {
  it("is the operator's, in the asking call's trace and task, naming the request, the reason, who asked and for whom", () => {
    const request = newApprovalRequest(
      {
        id: 'jti-42',
        tenant: 't1',
        tool: 'create_purchase_order',
        toolVersion: '1.0.0',
        arguments: { sku: 'SKU-21', quantity: 4, supplier_id: 'SUP-2' },
        argumentsHash: 'a'.repeat(64),
        requester: 'agent:purchasing',
        onBehalfOf: 'W-1',
        rule: { rule: 'purchase-order-total', reason: 'orders above $1,000 need approval', approvers: 1 },
        expiresAtMs: 10_000,
        origin: {
          traceId: 'b'.repeat(32),
          taskId: 'task-1',
          step: 2,
          index: 0,
          resourceKey: 't1:inventory:SKU-21',
        },
      },
      1_000,
    );
    const event = decisionAuditEvent(
      request,
      { sku: 'SKU-21' },
      'mia',
      'rejected',
      'supplier on hold',
      5_000,
    );
    expect(event).toMatchObject({
      recordId: 'operator:approval:jti-42:1',
      callId: 'approval:jti-42',
      tenant: 't1',
      taskId: 'task-1',
      step: 2,
      traceId: 'b'.repeat(32),
      resourceKey: 't1:inventory:SKU-21',
      principalId: 'operator:mia',
      source: 'operator',
      producerId: 'operator:mia',
      outcome: 'POLICY_VIOLATION',
      decisions: [
        {
          decision: 'refuse',
          reason:
            'approval request jti-42 rejected by operator:mia: supplier on hold [requested by agent:purchasing on behalf of W-1; orders above $1,000 need approval]',
        },
      ],
    });
    expect(JSON.parse(event.argumentsJson)).toEqual({ sku: 'SKU-21' });
    // The same person spelt with the console's prefix is one person.
    expect(decisionAuditEvent(request, {}, 'operator:mia', 'approved', 'ok', 5_000).principalId).toBe(
      'operator:mia',
    );
  });
});

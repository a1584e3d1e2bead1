import { describe, expect, it } from 'vitest';
import { previewRefusalError } from '../../../libs/patterns/preview/preview-refusal-error.js';
import type { StoredAuditRecord } from '../../../libs/ports/audit-store.js';
import { awaitingApprovalOf, decisionAuditEvent } from '../../../services/ops-console/approvals.js';
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

/** An executor's audit record of a confirm the preview gate refused with `message`. */
function refusedConfirm(
  message: string,
  source: StoredAuditRecord['source'] = 'executor',
): StoredAuditRecord {
  return {
    recordId: 'call-1:1',
    producerId: 'executor-1',
    source,
    recordedAtMs: 1_000,
    chain: 't1',
    seq: 4,
    prevHash: '0'.repeat(64),
    hash: '1'.repeat(64),
    record: {
      callId: 'call-1',
      tool: 'create_purchase_order',
      principalId: 'agent:purchasing',
      tenant: 't1',
      taskId: 'task-1',
      step: 0,
      index: 0,
      traceId: 'trace-1',
      resourceKey: 't1:inventory:SKU-21',
      arguments: { sku: 'SKU-21', quantity: 4, preview_token: '[redacted]' },
      outcome: 'POLICY_VIOLATION',
      errorCode: 'POLICY_VIOLATION',
      decisions: [
        { stage: 'execute', decision: 'refuse', reason: message, code: 'POLICY_VIOLATION', durationMs: 3 },
      ],
      attempts: [],
      startedAtMs: 990,
      finishedAtMs: 1_000,
    },
  };
}

describe('the approvals queue', () => {
  const expiresAtMs = Date.parse('2026-05-01T10:10:00.000Z');
  const awaiting = previewRefusalError(
    { reason: 'awaiting-approval', jti: 'jti-42', expiresAtMs },
    { previewTool: 'preview_purchase_order' },
  ).message;

  it("reads the preview id and expiry from the gate's own awaiting-approval refusal", () => {
    expect(awaitingApprovalOf(refusedConfirm(awaiting))).toEqual({ jti: 'jti-42', expiresAtMs });
  });

  it('ignores other refusals, and records not written by an executor', () => {
    const used = previewRefusalError({ reason: 'already-used', jti: 'jti-42' }, { previewTool: 'p' }).message;
    expect(awaitingApprovalOf(refusedConfirm(used))).toBeUndefined();
    expect(awaitingApprovalOf(refusedConfirm(awaiting, 'operator'))).toBeUndefined();
  });

  it("audits a decision under the operator, in the call's chain, naming the preview, the reason and the requester", () => {
    const stored = refusedConfirm(awaiting);
    const event = decisionAuditEvent(
      {
        jti: 'jti-42',
        expiresAtMs,
        tool: 'create_purchase_order',
        requester: 'agent:purchasing',
        tenant: 't1',
        resourceKey: 't1:inventory:SKU-21',
        arguments: stored.record.arguments,
        callId: 'call-1',
        traceId: 'trace-1',
        askedAtMs: 1_000,
        record: stored,
      },
      'operator:mia',
      'rejected',
      'supplier on hold',
      5_000,
    );
    expect(event).toMatchObject({
      recordId: 'operator:preview:jti-42',
      callId: 'call-1',
      tenant: 't1',
      principalId: 'operator:mia',
      source: 'operator',
      producerId: 'operator:mia',
      outcome: 'POLICY_VIOLATION',
      decisions: [
        {
          decision: 'refuse',
          reason: 'preview jti-42 rejected by operator:mia: supplier on hold [on behalf of agent:purchasing]',
        },
      ],
    });
    expect(JSON.parse(event.argumentsJson)).toEqual({
      sku: 'SKU-21',
      quantity: 4,
      preview_token: '[redacted]',
    });
  });
});

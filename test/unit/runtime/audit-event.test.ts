import { describe, expect, it } from 'vitest';
import { MemoryAuditStore } from '../../../libs/adapters/memory/audit-store.js';
import { indexedColumns } from '../../../libs/audit/columns.js';
import { toStorableJson } from '../../../libs/audit/storable-json.js';
import { verifyChains } from '../../../libs/audit/verify.js';
import type { AuditRecord, PolicyContext } from '../../../libs/core/audit-record.js';
import { LocalEventCodec } from '../../../libs/events/local-codec.js';
import {
  auditedArgumentsJson,
  auditedResultJson,
  MAX_AUDITED_JSON_BYTES,
  toAuditEvent,
} from '../../../libs/runtime/audit-event.js';
import { toAuditEnvelope } from '../../../services/audit-sink/audit-envelope.js';
import { auditRecord } from '../audit/fixtures.js';

function nested(depth: number): unknown {
  return JSON.parse('{"a":'.repeat(depth) + '1' + '}'.repeat(depth)) as unknown;
}

describe('audited arguments and results the audit store can always hold', () => {
  it('keep storable fields and say why an unstorable one was left out', () => {
    const text = auditedArgumentsJson({ ticket: 'T-1', deep: nested(20_000), huge: Infinity });
    const args = JSON.parse(text) as Record<string, string>;
    expect(args.ticket).toBe('T-1');
    expect(args.deep).toMatch(/^\[omitted: Not JSON data: nesting deeper than 256 at \$\.arguments\.deep\.a/);
    expect(args.huge).toMatch(/^\[omitted: Not JSON data: Infinity at \$\.arguments\.huge/);
    // What the audit sink stores: the record with these arguments is JSON data.
    expect(() => toStorableJson({ arguments: args })).not.toThrow();
  });

  it('count nesting from the record, as the audit store does', () => {
    expect(JSON.parse(auditedArgumentsJson({ ok: nested(250) })).ok).toEqual(nested(250));
    expect(JSON.parse(auditedArgumentsJson({ deep: nested(255) })).deep).toMatch(/^\[omitted/);
  });

  it('replace arguments or a result above the size budget by an object saying so', () => {
    const big = 'x'.repeat(MAX_AUDITED_JSON_BYTES);
    expect(JSON.parse(auditedArgumentsJson({ note: big }))).toEqual({
      '[omitted]': expect.stringMatching(/bytes of JSON, above the 262144-byte audit limit/),
    });
    expect(JSON.parse(auditedResultJson({ body: big }))).toHaveProperty('[omitted]');
    expect(JSON.parse(auditedResultJson(nested(300)))).toHaveProperty('[omitted]');
    expect(JSON.parse(auditedResultJson({ refund_id: 'R-1' }))).toEqual({ refund_id: 'R-1' });
  });
});

describe("a record's policy context on the audit path: event, Avro, audit sink, hash chain", () => {
  // The real schema files, as the embedded mode and (through the registry) production encode them.
  const codec = new LocalEventCodec();

  /** What the audit sink makes of `record` once the executor published it. */
  async function throughTheTopic(record: AuditRecord, recordId: string) {
    const event = toAuditEvent(record, { recordId, producerId: 'executor-1' });
    const decoded = await codec.decode('audit', await codec.encode('audit', event));
    return { event, decoded, envelope: toAuditEnvelope(decoded) };
  }

  const POLICIES: Readonly<Record<string, PolicyContext>> = {
    'judged, with a shadow refusal': {
      version: 'refunds-2026-03-01',
      roles: ['support', 'refunds:small'],
      facts: { refunded_on_order: '99.98', refunds_today: '3', net_adjustment: '-0.0001', none_yet: '0' },
      ruleId: 'refund-support-limit',
      shadow: { version: 'refunds-2026-04-01', decision: 'refuse', ruleId: 'refund-cap-per-order' },
    },
    'judged, with a shadow that allows': {
      version: 'v7',
      roles: [],
      facts: {},
      shadow: { version: 'v8', decision: 'allow' },
    },
    'not judged by the rules (a refusal before them)': { version: 'v7' },
  };

  it.each(Object.entries(POLICIES))('comes back as it went in: %s', async (_, policy) => {
    const record = auditRecord({ policy });
    const { event, decoded, envelope } = await throughTheTopic(record, 'rec-1');
    // An executor's record has no client: it decodes as null, like every absent optional field.
    expect(decoded).toEqual({ ...event, client: null });
    expect(envelope.record).toStrictEqual(record);
  });

  it('stays absent from a record without one, through null on the topic', async () => {
    const record = auditRecord();
    const { event, decoded, envelope } = await throughTheTopic(record, 'rec-1');
    expect(event).not.toHaveProperty('policy');
    expect(decoded.policy).toBeNull();
    expect(envelope.record).toStrictEqual(record);
    expect(envelope.record).not.toHaveProperty('policy');
  });

  it('is stored verbatim and hashed: the chain verifies, and an edited fact breaks it', async () => {
    const store = new MemoryAuditStore();
    const records = [
      auditRecord({ policy: POLICIES['judged, with a shadow refusal']! }),
      auditRecord(),
      auditRecord({ policy: POLICIES['judged, with a shadow that allows']! }),
    ];
    for (const [i, record] of records.entries()) {
      await store.append([(await throughTheTopic(record, `rec-${i}`)).envelope]);
    }
    const stored = await store.query({ tenant: 't1' });
    expect(stored.map((s) => s.record)).toStrictEqual(records);
    expect(await store.verify()).toMatchObject({ ok: true, checked: 3 });

    // The same rows with one fact changed after the fact, as an edit of the stored body would.
    const rows = stored.map((s) => ({ ...s, columns: indexedColumns(s.record) }));
    const first = rows[0]!;
    const policy = first.record.policy!;
    rows[0] = {
      ...first,
      record: {
        ...first.record,
        policy: { ...policy, facts: { ...policy.facts, refunded_on_order: '9.98' } },
      },
    };
    const readPage = (chain: string, afterSeq: number, limit: number) =>
      Promise.resolve(rows.filter((r) => r.chain === chain && r.seq > afterSeq).slice(0, limit));
    expect(await verifyChains({ chains: ['t1'], readPage })).toMatchObject({
      ok: false,
      chain: 't1',
      firstBrokenSeq: 1,
    });
  });
});

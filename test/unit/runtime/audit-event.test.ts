import { describe, expect, it } from 'vitest';
import { toStorableJson } from '../../../libs/audit/storable-json.js';
import {
  auditedArgumentsJson,
  auditedResultJson,
  MAX_AUDITED_JSON_BYTES,
} from '../../../libs/runtime/audit-event.js';

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

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { indexedColumns } from '../../../libs/audit/columns.js';
import { prepareEnvelope } from '../../../libs/audit/envelope.js';
import {
  GENESIS_HASH,
  groupByChain,
  hashedContent,
  linkHash,
  linkRecords,
} from '../../../libs/audit/hash-chain.js';
import { ChainVerifier, verifyChains, type VerifiableRecord } from '../../../libs/audit/verify.js';
import type { ChainAnchor, StoredAuditRecord } from '../../../libs/ports/audit-store.js';
import { auditRecord, envelope, refusedRecord } from './fixtures.js';

function chainOf(n: number, tenant = 't1'): VerifiableRecord[] {
  const envs = Array.from({ length: n }, (_, i) =>
    prepareEnvelope(envelope(i % 3 === 0 ? refusedRecord({ tenant }) : auditRecord({ tenant }))),
  );
  return linkRecords(tenant, undefined, envs).map(withColumns);
}

function withColumns(r: StoredAuditRecord): VerifiableRecord {
  return { ...r, columns: indexedColumns(r.record) };
}

/** What a report that found the chain broken at `firstBrokenSeq`, for `reason`, matches. */
const brokenAt = (firstBrokenSeq: number, reason: string) => ({ ok: false, firstBrokenSeq, reason });

function verifyArray(rows: readonly VerifiableRecord[], chain = 't1', anchors: readonly ChainAnchor[] = []) {
  return verifyChains({
    chains: [chain],
    anchors,
    pageSize: 4,
    readPage: (c, after, limit) =>
      Promise.resolve(rows.filter((r) => r.chain === c && r.seq > after).slice(0, limit)),
  });
}

describe('linkRecords', () => {
  it('numbers a chain from 1 and links each record to the previous hash', () => {
    const rows = chainOf(5);
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(rows[0]!.prevHash).toBe(GENESIS_HASH);
    // 64 hex characters like every hash, so prevHash + content can be split only one way.
    expect(rows[0]!.prevHash).toBe('0'.repeat(64));
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.prevHash).toBe(rows[i - 1]!.hash);
    expect(new Set(rows.map((r) => r.hash)).size).toBe(5);
  });

  it('continues from a given head', () => {
    const first = chainOf(3);
    const head = { seq: 3, hash: first[2]!.hash };
    const more = linkRecords('t1', head, [prepareEnvelope(envelope(auditRecord()))]);
    expect(more[0]!.seq).toBe(4);
    expect(more[0]!.prevHash).toBe(first[2]!.hash);
  });

  it('hashes the same content the same way whatever the key order', () => {
    const rec = auditRecord();
    const env = envelope(rec);
    const reordered = envelope(Object.fromEntries(Object.entries(rec).reverse()) as typeof rec, {
      recordId: env.recordId,
    });
    const a = linkHash(GENESIS_HASH, hashedContent(prepareEnvelope(env), 't1', 1));
    const b = linkHash(GENESIS_HASH, hashedContent(prepareEnvelope(reordered), 't1', 1));
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    // The seq is part of the content: the same record at another seq hashes differently.
    expect(linkHash(GENESIS_HASH, hashedContent(prepareEnvelope(env), 't1', 2))).not.toBe(a);
  });

  it('refuses a record of another chain', () => {
    expect(() =>
      linkRecords('t1', undefined, [prepareEnvelope(envelope(auditRecord({ tenant: 't2' })))]),
    ).toThrow(/chain t2/);
  });
});

describe('groupByChain', () => {
  it('groups by tenant in name order, keeps order within a chain, drops repeated recordIds', () => {
    const a1 = envelope(auditRecord({ tenant: 'b' }));
    const b1 = envelope(auditRecord({ tenant: 'a' }));
    const a2 = envelope(auditRecord({ tenant: 'b' }));
    const { groups, repeated } = groupByChain([a1, b1, a2, a1]);
    expect([...groups.keys()]).toEqual(['a', 'b']);
    expect(groups.get('b')!.map((e) => e.recordId)).toEqual([a1.recordId, a2.recordId]);
    expect(repeated).toBe(1);
  });
});

describe('groupByChain: the lock order', () => {
  const tenants = ['t07', 't10', 'T2', 't01', 'b', 't03', 'a', 't09', 'A', 't05', 't02', 't08', 't04', 't06'];

  it('returns the chains in code-unit order whatever order the records came in, so locks never cross', () => {
    // Upper case sorts before lower case, as in every store's binary collation.
    const sorted = [
      'A',
      'T2',
      'a',
      'b',
      't01',
      't02',
      't03',
      't04',
      't05',
      't06',
      't07',
      't08',
      't09',
      't10',
    ];
    for (const order of [tenants, [...tenants].reverse(), [...sorted].reverse(), sorted]) {
      const { groups } = groupByChain(order.map((tenant) => envelope(auditRecord({ tenant }))));
      expect([...groups.keys()]).toEqual(sorted);
    }
  });

  it('two batches over the same chains take them in the same order', () => {
    const first = groupByChain(tenants.map((tenant) => envelope(auditRecord({ tenant }))));
    const second = groupByChain([...tenants].reverse().map((tenant) => envelope(auditRecord({ tenant }))));
    expect([...first.groups.keys()]).toEqual([...second.groups.keys()]);
  });
});

describe('verify over a stored array', () => {
  it('accepts an untouched chain and reports its head', async () => {
    const rows = chainOf(10);
    const report = await verifyArray(rows);
    expect(report).toEqual({ ok: true, checked: 10, heads: { t1: { seq: 10, hash: rows[9]!.hash } } });
  });

  it('an empty store verifies with no heads', async () => {
    expect(await verifyArray([])).toEqual({ ok: true, checked: 0, heads: {} });
  });

  it('an edited body is reported at exactly its seq', async () => {
    const rows = chainOf(10);
    const k = 6;
    rows[k - 1] = { ...rows[k - 1]!, record: { ...rows[k - 1]!.record, principalId: 'someone-else' } };
    // The column moved with the body, as an UPDATE of both would do.
    rows[k - 1] = withColumns(rows[k - 1]!);
    const report = await verifyArray(rows);
    expect(report).toMatchObject({
      ok: false,
      chain: 't1',
      firstBrokenSeq: k,
      reason: 'hash-mismatch',
      checked: k,
    });
  });

  it('an edited column alone (body intact) is reported as a column mismatch at its seq', async () => {
    const rows = chainOf(8);
    rows[2] = { ...rows[2]!, columns: { ...rows[2]!.columns, principalId: 'someone-else' } };
    expect(await verifyArray(rows)).toMatchObject(brokenAt(3, 'column-mismatch'));
  });

  it('an edited record whose hash was recomputed breaks the next link', async () => {
    const rows = chainOf(8);
    const edited = { ...rows[3]!, recordedAtMs: 1 };
    rows[3] = { ...edited, hash: linkHash(edited.prevHash, hashedContent(edited, 't1', 4)) };
    expect(await verifyArray(rows)).toMatchObject(brokenAt(5, 'prev-hash-mismatch'));
  });

  it('a deleted record is reported as the missing seq', async () => {
    const rows = chainOf(8);
    rows.splice(4, 1);
    expect(await verifyArray(rows)).toMatchObject(brokenAt(5, 'seq-gap'));
  });

  it('a deleted first record is reported as seq 1', async () => {
    const rows = chainOf(3).slice(1);
    expect(await verifyArray(rows)).toMatchObject(brokenAt(1, 'seq-gap'));
  });

  it('an anchor catches deleted newest records and a rewritten suffix', async () => {
    const rows = chainOf(8);
    const anchors = [{ chain: 't1', seq: 8, hash: rows[7]!.hash }] as const;
    expect(await verifyArray(rows, 't1', anchors)).toMatchObject({ ok: true });
    expect(await verifyArray(rows.slice(0, 6), 't1', anchors)).toMatchObject(brokenAt(7, 'anchor-mismatch'));
    // Rewrite seq 7 and 8 consistently: in itself the chain is fine, the anchor is not.
    const envs = rows.slice(6).map((r) => ({ ...r, producerId: 'forger' }));
    const forged = linkRecords('t1', { seq: 6, hash: rows[5]!.hash }, envs).map(withColumns);
    const rewritten = [...rows.slice(0, 6), ...forged];
    expect(await verifyArray(rewritten)).toMatchObject({ ok: true });
    expect(await verifyArray(rewritten, 't1', anchors)).toMatchObject(brokenAt(8, 'anchor-mismatch'));
  });

  it('an anchored chain that vanished entirely is reported', async () => {
    const report = await verifyChains({
      chains: [],
      anchors: [{ chain: 't9', seq: 3, hash: 'a'.repeat(64) }],
      readPage: () => Promise.resolve([]),
    });
    expect(report).toMatchObject({ ok: false, chain: 't9', firstBrokenSeq: 1, reason: 'anchor-mismatch' });
  });

  it('verifies several chains in name order and stops at the first broken one', async () => {
    const a = chainOf(5, 'a');
    const b = chainOf(5, 'b');
    const c = chainOf(5, 'c');
    b[1] = { ...b[1]!, hash: 'f'.repeat(64) };
    c[0] = { ...c[0]!, hash: 'f'.repeat(64) };
    const all = [...c, ...b, ...a];
    const report = await verifyChains({
      chains: ['c', 'a', 'b'],
      pageSize: 2,
      readPage: (ch, after, limit) =>
        Promise.resolve(all.filter((r) => r.chain === ch && r.seq > after).slice(0, limit)),
    });
    expect(report).toMatchObject({
      ok: false,
      chain: 'b',
      firstBrokenSeq: 2,
      reason: 'hash-mismatch',
      checked: 7,
    });
  });

  it('ChainVerifier keeps returning the first break', () => {
    const rows = chainOf(4);
    const v = new ChainVerifier('t1');
    expect(v.check(rows[0]!)).toBeUndefined();
    const broken = v.check({ ...rows[1]!, prevHash: GENESIS_HASH });
    expect(broken).toMatchObject({ firstBrokenSeq: 2, reason: 'prev-hash-mismatch' });
    expect(v.check(rows[2]!)).toBe(broken);
    expect(v.end()).toBe(broken);
  });

  it('any single-field edit of any record is found at exactly that record (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }),
        fc.nat(),
        fc.constantFrom('recordId', 'producerId', 'recordedAtMs', 'arguments', 'outcome', 'seqOnly'),
        async (n, pick, field) => {
          const rows = chainOf(n);
          const k = (pick % n) + 1;
          const row = rows[k - 1]!;
          let edited: VerifiableRecord;
          switch (field) {
            case 'recordId':
              edited = { ...row, recordId: `${row.recordId}x` };
              break;
            case 'producerId':
              edited = { ...row, producerId: 'other' };
              break;
            case 'recordedAtMs':
              edited = { ...row, recordedAtMs: row.recordedAtMs + 1 };
              break;
            case 'arguments':
              edited = withColumns({ ...row, record: { ...row.record, arguments: { order_id: 'O-1' } } });
              break;
            case 'outcome':
              edited = withColumns({ ...row, record: { ...row.record, outcome: 'EXECUTION_ERROR' } });
              break;
            default:
              edited = { ...row, hash: GENESIS_HASH };
          }
          rows[k - 1] = edited;
          const report = await verifyArray(rows);
          expect(report).toMatchObject({ ok: false, firstBrokenSeq: k });
        },
      ),
      { numRuns: 150 },
    );
  });
});

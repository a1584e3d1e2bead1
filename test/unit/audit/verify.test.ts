import { describe, expect, it } from 'vitest';
import { indexedColumns } from '../../../libs/audit/columns.js';
import { prepareEnvelope } from '../../../libs/audit/envelope.js';
import { GENESIS_HASH, linkRecords } from '../../../libs/audit/hash-chain.js';
import {
  byCodeUnits,
  ChainVerifier,
  verifyChains,
  type VerifiableRecord,
} from '../../../libs/audit/verify.js';
import type { ChainAnchor, VerifyProgress } from '../../../libs/ports/audit-store.js';
import { auditRecord, envelope } from './fixtures.js';

/** A linked chain of `n` records for tenant (= chain) `chain`, as a store reads it back. */
function chain(n: number, name = 't1'): VerifiableRecord[] {
  const envs = Array.from({ length: n }, () => prepareEnvelope(envelope(auditRecord({ tenant: name }))));
  return linkRecords(name, undefined, envs).map((r) => ({ ...r, columns: indexedColumns(r.record) }));
}

/** A store over `rows` that counts the pages it was asked for. */
function store(rows: readonly VerifiableRecord[]) {
  const pages: { chain: string; afterSeq: number; limit: number }[] = [];
  return {
    pages,
    readPage: (c: string, afterSeq: number, limit: number) => {
      pages.push({ chain: c, afterSeq, limit });
      return Promise.resolve(rows.filter((r) => r.chain === c && r.seq > afterSeq).slice(0, limit));
    },
  };
}

const anchorAt = (rows: readonly VerifiableRecord[], seq: number): ChainAnchor => ({
  chain: rows[0]!.chain,
  seq,
  hash: rows[seq - 1]!.hash,
});

describe('verify: an anchor holds the end of the chain', () => {
  it('cutting only the anchored last record is found: the chain must reach the anchor', async () => {
    const rows = chain(5);
    const anchors = [anchorAt(rows, 5)];
    expect(await verifyChains({ chains: ['t1'], anchors, ...store(rows) })).toMatchObject({ ok: true });
    const report = await verifyChains({ chains: ['t1'], anchors, ...store(rows.slice(0, 4)) });
    expect(report).toMatchObject({ ok: false, chain: 't1', firstBrokenSeq: 5, reason: 'anchor-mismatch' });
    expect(report.ok === false && report.detail).toBe('the chain ends at seq 4 but seq 5 was anchored');
  });

  it('names the highest anchor beyond the end', async () => {
    const rows = chain(6);
    const anchors = [anchorAt(rows, 5), anchorAt(rows, 6), anchorAt(rows, 2)];
    const report = await verifyChains({ chains: ['t1'], anchors, ...store(rows.slice(0, 3)) });
    expect(report).toMatchObject({ ok: false, firstBrokenSeq: 4, reason: 'anchor-mismatch' });
    expect(report.ok === false && report.detail).toBe('the chain ends at seq 3 but seq 6 was anchored');
  });

  it('an anchor of another chain does not bind this one', () => {
    const rows = chain(2);
    const verifier = new ChainVerifier('t1', [{ chain: 't2', seq: 1, hash: 'f'.repeat(64) }]);
    for (const row of rows) expect(verifier.check(row)).toBeUndefined();
    expect(verifier.end()).toBeUndefined();
    expect(verifier.head).toEqual({ seq: 2, hash: rows[1]!.hash });
  });

  it('an anchor at a seq whose hash changed is reported at that seq', () => {
    const rows = chain(3);
    const verifier = new ChainVerifier('t1', [{ chain: 't1', seq: 2, hash: 'e'.repeat(64) }]);
    expect(verifier.check(rows[0]!)).toBeUndefined();
    expect(verifier.check(rows[1]!)).toEqual({
      chain: 't1',
      firstBrokenSeq: 2,
      reason: 'anchor-mismatch',
      detail: 'seq 2 no longer has the anchored hash',
    });
  });
});

describe('ChainVerifier: what each broken link says', () => {
  it('a record of another chain at the expected seq is a gap in this one', () => {
    const other = chain(1, 't2');
    expect(new ChainVerifier('t1').check(other[0]!)).toEqual({
      chain: 't1',
      firstBrokenSeq: 1,
      reason: 'seq-gap',
      detail: 'expected seq 1, found seq 1 in chain t2',
    });
  });

  it('a prevHash that is not the previous hash names the previous seq', () => {
    const rows = chain(3);
    const verifier = new ChainVerifier('t1');
    verifier.check(rows[0]!);
    verifier.check(rows[1]!);
    expect(verifier.check({ ...rows[2]!, prevHash: rows[0]!.hash })).toMatchObject({
      firstBrokenSeq: 3,
      reason: 'prev-hash-mismatch',
      detail: 'prevHash does not match the hash of seq 2',
    });
  });

  it('content that no longer re-hashes, and content that is no longer JSON, are hash mismatches', () => {
    const rows = chain(1);
    expect(new ChainVerifier('t1').check({ ...rows[0]!, hash: GENESIS_HASH })).toMatchObject({
      reason: 'hash-mismatch',
      detail: 'the stored content does not hash to the stored hash',
    });
    const notJson = { ...rows[0]!, record: { ...rows[0]!.record, arguments: { n: 10n } } };
    expect(new ChainVerifier('t1').check(notJson as unknown as VerifiableRecord)).toMatchObject({
      firstBrokenSeq: 1,
      reason: 'hash-mismatch',
      detail: 'the stored content is no longer JSON data',
    });
  });

  it('a column edited apart from the body names the column', () => {
    const rows = chain(1);
    const edited = { ...rows[0]!, columns: { ...rows[0]!.columns, principalId: 'someone-else' } };
    expect(new ChainVerifier('t1').check(edited)).toMatchObject({
      reason: 'column-mismatch',
      detail: 'columns differ from the hashed body: principalId',
    });
    const two = { ...edited, columns: { ...edited.columns, tool: 'other_tool' } };
    expect(new ChainVerifier('t1').check(two)?.detail).toMatch(
      /^columns differ from the hashed body: \w+, \w+$/,
    );
  });

  it('counts every record it was given, the broken one included, and nothing after it', () => {
    const rows = chain(4);
    const verifier = new ChainVerifier('t1');
    verifier.check(rows[0]!);
    verifier.check({ ...rows[1]!, hash: GENESIS_HASH });
    verifier.check(rows[2]!);
    expect(verifier.checked).toBe(2);
  });

  it('an empty chain has no head; a verified one has its last record as head', () => {
    const verifier = new ChainVerifier('t1');
    expect(verifier.head).toBeUndefined();
    expect(verifier.end()).toBeUndefined();
    const rows = chain(1);
    verifier.check(rows[0]!);
    expect(verifier.head).toEqual({ seq: 1, hash: rows[0]!.hash });
  });
});

describe('verifyChains: pages, chains and progress', () => {
  it('reads page after page from the last seq, and stops after the first short page', async () => {
    const rows = chain(6);
    const s = store(rows);
    const report = await verifyChains({ chains: ['t1'], pageSize: 3, readPage: s.readPage });
    expect(report).toEqual({ ok: true, checked: 6, heads: { t1: { seq: 6, hash: rows[5]!.hash } } });
    // Two full pages, then an empty one that ends the walk.
    expect(s.pages).toEqual([
      { chain: 't1', afterSeq: 0, limit: 3 },
      { chain: 't1', afterSeq: 3, limit: 3 },
      { chain: 't1', afterSeq: 6, limit: 3 },
    ]);
  });

  it('a short page is the last one: no read after it', async () => {
    const s = store(chain(5));
    expect(await verifyChains({ chains: ['t1'], pageSize: 3, readPage: s.readPage })).toMatchObject({
      ok: true,
      checked: 5,
    });
    expect(s.pages.map((p) => p.afterSeq)).toEqual([0, 3]);
  });

  it('reads 1000 records a page unless told otherwise', async () => {
    const s = store(chain(2));
    await verifyChains({ chains: ['t1'], readPage: s.readPage });
    expect(s.pages).toEqual([{ chain: 't1', afterSeq: 0, limit: 1000 }]);
  });

  it('stops reading a chain at its first broken link', async () => {
    const rows = chain(6);
    rows[1] = { ...rows[1]!, hash: GENESIS_HASH };
    const s = store(rows);
    const report = await verifyChains({ chains: ['t1'], pageSize: 2, readPage: s.readPage });
    expect(report).toMatchObject({ ok: false, firstBrokenSeq: 2, checked: 2 });
    expect(s.pages).toHaveLength(1);
  });

  it('reports progress after each page, counted over every chain', async () => {
    const a = chain(3, 'a');
    const b = chain(2, 'b');
    const progress: VerifyProgress[] = [];
    const report = await verifyChains({
      chains: ['b', 'a'],
      pageSize: 2,
      onProgress: (p) => progress.push(p),
      ...store([...a, ...b]),
    });
    expect(report).toMatchObject({ ok: true, checked: 5 });
    expect(progress).toEqual([
      { chain: 'a', checked: 2 },
      { chain: 'a', checked: 3 },
      { chain: 'b', checked: 5 },
      { chain: 'b', checked: 5 },
    ]);
  });

  it('`only` verifies that one chain, anchored or not', async () => {
    const a = chain(2, 'a');
    const b = chain(2, 'b');
    b[0] = { ...b[0]!, hash: GENESIS_HASH };
    const s = store([...a, ...b]);
    const report = await verifyChains({ chains: ['a', 'b'], only: 'a', anchors: [anchorAt(b, 2)], ...s });
    expect(report).toEqual({ ok: true, checked: 2, heads: { a: { seq: 2, hash: a[1]!.hash } } });
    expect(new Set(s.pages.map((p) => p.chain))).toEqual(new Set(['a']));
  });

  it('an empty chain has no head in the report', async () => {
    const a = chain(1, 'a');
    expect(await verifyChains({ chains: ['a', 'empty'], ...store(a) })).toStrictEqual({
      ok: true,
      checked: 1,
      heads: { a: { seq: 1, hash: a[0]!.hash } },
    });
  });
});

describe('byCodeUnits', () => {
  it('orders by UTF-16 code units, upper case before lower case, whatever the locale', () => {
    expect(['b', 'B', 'a', 'é', 'A'].sort(byCodeUnits)).toEqual(['A', 'B', 'a', 'b', 'é']);
    expect(byCodeUnits('a', 'a')).toBe(0);
    expect(byCodeUnits('a', 'b')).toBe(-1);
    expect(byCodeUnits('b', 'a')).toBe(1);
  });
});

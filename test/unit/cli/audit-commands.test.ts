import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryAuditStore } from '../../../libs/adapters/memory/index.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import { auditRecord, envelope, policyRefusedRecord, refusedRecord } from '../audit/fixtures.js';
import { cli } from './capture.js';

/**
 * The audit commands over the in-memory audit store (it passes the same contract suite as the
 * Postgres one; the Postgres wiring is covered in test/integration/cli).
 */
let store: MemoryAuditStore;
const run = (argv: string[]) => cli(argv, { stores: { audit: store } });
/** `run`, with `dir` as the working directory (where relative anchor files are read). */
const runIn = (dir: string, argv: string[]) => cli(argv, { stores: { audit: store }, cwd: dir });

const DAY = Date.UTC(2025, 2, 1);

beforeEach(async () => {
  store = new MemoryAuditStore();
  await store.append([
    envelope(auditRecord({ principalId: 'agent-ann', tool: 'issue_refund', callId: 'c-1' }), {
      recordedAtMs: DAY + 1_000,
    }),
    envelope(refusedRecord({ principalId: 'agent-bob', tool: 'issue_refund', callId: 'c-2' }), {
      recordedAtMs: DAY + 2_000,
    }),
    envelope(
      policyRefusedRecord('refund over the $500 limit', {
        principalId: 'agent-eve',
        tool: 'issue_refund',
        callId: 'c-3',
      }),
      { recordedAtMs: DAY + 3_000 },
    ),
    envelope(
      auditRecord({
        principalId: 'agent-ann',
        tool: 'lookup_order',
        callId: 'c-4',
        resourceKey: 't1:order:O-7',
      }),
      {
        recordedAtMs: DAY + 4_000,
      },
    ),
    envelope(
      auditRecord({
        tenant: 't2',
        principalId: 'agent-zed',
        tool: 'issue_refund',
        callId: 'c-5',
        resourceKey: 't2:order:O-5512',
      }),
      {
        recordedAtMs: DAY + 5_000,
      },
    ),
  ]);
});

describe('audit who', () => {
  it('splits attempts on a resource into who did it and who tried (JSON)', async () => {
    const r = await run(['audit', 'who', 'O-5512', '--tool', 'issue_refund', '--tenant', 't1', '--json']);
    expect(r.code).toBe(EXIT.ok);
    const body = r.json<{
      did: { principalId: string }[];
      tried: { principalId: string; label: string; reason?: string }[];
    }>();
    expect(body.did.map((e) => e.principalId)).toEqual(['agent-ann']);
    expect(body.tried.map((e) => [e.principalId, e.label, e.reason])).toEqual([
      ['agent-bob', 'refused', 'not permitted'],
      ['agent-eve', 'refused', 'refund over the $500 limit'],
    ]);
  });

  it('prints both groups as tables', async () => {
    const r = await run(['audit', 'who', 'O-5512', '--tool', 'issue_refund', '--tenant', 't1']);
    expect(r.code).toBe(EXIT.ok);
    const [did, tried] = r.stdout.split('TRIED (2)');
    expect(did).toContain('DID (1): the tool succeeded for issue_refund on O-5512');
    expect(did).toMatch(/2025-03-01T00:00:01\.000Z +agent-ann +did +SUCCESS +issue_refund/);
    expect(tried).toMatch(/agent-bob +refused +UNAUTHORIZED +issue_refund +authorize +not permitted +c-2/);
    expect(tried).toMatch(
      /agent-eve +refused +POLICY_VIOLATION +issue_refund +business-rules +refund over the \$500 limit/,
    );
    expect(r.stderr).toBe('');
  });

  it('by full key without --tool, across tenants when not narrowed', async () => {
    const r = await run(['audit', 'who', 't2:order:O-5512', '--json']);
    expect(r.json<{ did: { principalId: string }[] }>().did.map((e) => e.principalId)).toEqual(['agent-zed']);
    const both = await run(['audit', 'who', 'O-5512', '--tool', 'issue_refund', '--json']);
    expect(both.json<{ did: unknown[] }>().did).toHaveLength(2);
  });

  it('says so when nobody touched the resource, and warns when the limit cut the answer', async () => {
    const none = await run(['audit', 'who', 'O-1', '--tool', 'issue_refund']);
    expect(none.code).toBe(EXIT.ok);
    expect(none.stdout).toBe('No audit records for issue_refund on O-1.\n');
    expect(none.stderr).toBe('');
    const cut = await run(['audit', 'who', 'O-5512', '--tool', 'issue_refund', '--limit', '2', '--json']);
    expect(cut.json<{ truncated: boolean }>().truncated).toBe(true);
    expect(cut.stderr).toContain('Showing the first 2 attempts');
  });
});

describe('audit who, a full key with --tool', () => {
  it('finds nothing (the key is no id) and says which form --tool takes', async () => {
    const r = await run(['audit', 'who', 't2:order:O-5512', '--tool', 'issue_refund']);
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout).toBe('No audit records for issue_refund on t2:order:O-5512.\n');
    expect(r.stderr).toBe(
      "'t2:order:O-5512' looks like a full resource key; with --tool, <resource> is the resource's own id: " +
        "'toolgate audit who O-5512 --tool issue_refund --tenant t2', or the key without --tool.\n",
    );
    const meant = await run(['audit', 'who', 'O-5512', '--tool', 'issue_refund', '--tenant', 't2', '--json']);
    expect(meant.json<{ did: unknown[] }>().did).toHaveLength(1);
  });
});

describe('audit query', () => {
  it('filters by tool, principal, outcome and time window', async () => {
    const q = async (...argv: string[]) =>
      (await run(['audit', 'query', ...argv, '--json']))
        .json<{ records: { record: { callId: string } }[] }>()
        .records.map((r) => r.record.callId);
    expect(await q('--tool', 'issue_refund')).toEqual(['c-1', 'c-2', 'c-3', 'c-5']);
    expect(await q('--principal', 'agent-ann')).toEqual(['c-1', 'c-4']);
    expect(await q('--outcome', 'UNAUTHORIZED')).toEqual(['c-2']);
    expect(await q('--resource', 't1:order:O-5512', '--tenant', 't1')).toEqual(['c-1', 'c-2', 'c-3']);
    expect(await q('--from', '2025-03-01T00:00:02Z', '--to', '2025-03-01T00:00:04Z')).toEqual(['c-2', 'c-3']);
    expect(await q('--desc', '--limit', '2')).toEqual(['c-5', 'c-4']);
    expect(await q('--source', 'executor')).toEqual(['c-1', 'c-2', 'c-3', 'c-4', 'c-5']);
    expect(await q('--source', 'ops')).toEqual([]);
    expect(await q('--source', 'mcp-gateway')).toEqual([]);
  });

  it('prints a table with one line per record', async () => {
    const r = await run(['audit', 'query', '--tool', 'issue_refund', '--tenant', 't1']);
    expect(r.code).toBe(EXIT.ok);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TIME +CHAIN#SEQ +TOOL +PRINCIPAL +RESOURCE +OUTCOME +STAGE +REASON +TRACE$/);
    expect(lines.slice(2, 5).map((l) => l.split(/ {2,}/)[1])).toEqual(['t1#1', 't1#2', 't1#3']);
    expect(lines.at(-1)).toBe('3 records.');
  });

  it('refuses an unknown outcome with a suggestion', async () => {
    const r = await run(['audit', 'query', '--outcome', 'UNAUTHORISED']);
    expect(r.code).toBe(EXIT.usage);
    expect(r.stderr).toContain("Did you mean 'UNAUTHORIZED'?");
  });
});

describe('audit verify', () => {
  it('reports every chain intact with its head, and progress on stderr', async () => {
    const r = await run(['audit', 'verify', '--progress-every', '2']);
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout).toContain('OK: 5 records in 2 chains verified; every link holds.');
    expect(r.stdout).toMatch(/\nt1 +4 +[0-9a-f]{64}\n/);
    expect(r.stdout).toMatch(/\nt2 +1 +[0-9a-f]{64}\n/);
    // Progress comes per page read (the memory store reads 1000 a page: once per chain here), at
    // most once per --progress-every records: 4 passes 2, and 5 does not reach the next step, 6.
    expect(r.stderr).toBe('verify: 4 records checked (chain t1)\n');
  });

  it('--chain verifies one tenant; --json is the report itself', async () => {
    const r = await run(['audit', 'verify', '--chain', 't2', '--json', '--progress-every', '0']);
    expect(r.code).toBe(EXIT.ok);
    expect(r.stderr).toBe('');
    const report = r.json<{ ok: boolean; checked: number; heads: Record<string, { seq: number }> }>();
    expect(report).toMatchObject({ ok: true, checked: 1 });
    expect(Object.keys(report.heads)).toEqual(['t2']);
  });

  it('anchors from an earlier --json report pass while the chain is unchanged, and expose a different head', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-cli-'));
    const first = await run(['audit', 'verify', '--json']);
    writeFileSync(join(dir, 'heads.json'), first.stdout);
    const again = await runIn(dir, ['audit', 'verify', '--anchors', 'heads.json']);
    expect(again.code).toBe(EXIT.ok);

    // A head that is not what the chain holds at that seq: what a rewritten chain looks like.
    const report = first.json<{ heads: Record<string, { seq: number; hash: string }> }>();
    const forged = [{ chain: 't1', seq: report.heads.t1!.seq, hash: 'f'.repeat(64) }];
    writeFileSync(join(dir, 'forged.json'), JSON.stringify(forged));
    const broken = await runIn(dir, ['audit', 'verify', '--anchors', 'forged.json']);
    expect(broken.code).toBe(EXIT.failure);
    expect(broken.stdout).toContain('BROKEN: chain t1, seq 4: anchor-mismatch');
    const json = await runIn(dir, ['audit', 'verify', '--anchors', 'forged.json', '--json']);
    expect(json.code).toBe(EXIT.failure);
    expect(json.json()).toMatchObject({
      ok: false,
      chain: 't1',
      firstBrokenSeq: 4,
      reason: 'anchor-mismatch',
    });
  });

  it('refuses an anchors file it cannot use', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-cli-'));
    writeFileSync(join(dir, 'bad.json'), JSON.stringify([{ chain: 't1', seq: 0, hash: 'x' }]));
    const bad = await runIn(dir, ['audit', 'verify', '--anchors', 'bad.json']);
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.stderr).toContain(
      'is neither a list of {chain, seq, hash} nor a verify --json report with heads',
    );
    const missing = await runIn(dir, ['audit', 'verify', '--anchors', 'nope.json']);
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toContain('cannot read');
  });
});

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAuditStore } from '../../../libs/adapters/postgres/audit-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import type { AuditEnvelope } from '../../../libs/ports/audit-store.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { uniqueName } from '../../helpers/names.js';
import { auditRecord, envelope, refusedRecord } from '../../unit/audit/fixtures.js';
import { cli } from '../../unit/cli/capture.js';
import { databaseUrlFor } from './cli-env.js';

/**
 * The audit commands against a real Postgres audit store: "who refunded O-5512, and who tried",
 * queries, and verify before and after a superuser edits a record behind the triggers' back.
 */
let db: TestSchema;
let store: PostgresAuditStore;
let env: Record<string, string>;
const tenant = uniqueName('tenant');
const T = Date.UTC(2025, 2, 1, 9);

const run = (argv: string[]) => cli(argv, { env });

beforeAll(async () => {
  db = await createTestSchema('cli_audit');
  await migrate(db.pool);
  store = new PostgresAuditStore(db.pool);
  env = { DATABASE_URL: databaseUrlFor(db.schema) };
  const onOrder = { tenant, tool: 'issue_refund', resourceKey: `${tenant}:order:O-5512` };
  const envelopes: AuditEnvelope[] = [
    envelope(auditRecord({ ...onOrder, principalId: 'agent-ann', callId: 'refund-1' }), { recordedAtMs: T }),
    envelope(refusedRecord({ ...onOrder, principalId: 'agent-bob', callId: 'refund-2' }), {
      recordedAtMs: T + 60_000,
    }),
    envelope(
      refusedRecord({
        ...onOrder,
        principalId: 'agent-eve',
        callId: 'refund-3',
        outcome: 'POLICY_VIOLATION',
        errorCode: 'POLICY_VIOLATION',
        decisions: [
          {
            stage: 'business-rules',
            decision: 'refuse',
            reason: 'refund over the $500 limit',
            durationMs: 0.2,
          },
        ],
      }),
      { recordedAtMs: T + 120_000 },
    ),
    envelope(
      auditRecord({ tenant, tool: 'lookup_order', resourceKey: `${tenant}:order:O-5512`, callId: 'look-1' }),
      {
        recordedAtMs: T + 180_000,
      },
    ),
  ];
  expect(await store.append(envelopes)).toEqual({ appended: 4, duplicates: 0 });
});

afterAll(async () => {
  await db.drop();
});

describe('audit who against Postgres', () => {
  it('"who refunded O-5512, and who tried": one principal did it, two were refused', async () => {
    const r = await run(['audit', 'who', 'O-5512', '--tool', 'issue_refund', '--json']);
    expect(r.code).toBe(EXIT.ok);
    const answer = r.json<{
      did: { principalId: string; outcome: string; callId: string; seq: number }[];
      tried: { principalId: string; outcome: string; label: string; stage?: string; reason?: string }[];
    }>();
    expect(answer.did).toEqual([
      expect.objectContaining({ principalId: 'agent-ann', outcome: 'SUCCESS', callId: 'refund-1', seq: 1 }),
    ]);
    expect(answer.tried).toEqual([
      expect.objectContaining({
        principalId: 'agent-bob',
        outcome: 'UNAUTHORIZED',
        label: 'refused',
        stage: 'authorize',
        reason: 'not permitted',
      }),
      expect.objectContaining({
        principalId: 'agent-eve',
        outcome: 'POLICY_VIOLATION',
        label: 'refused',
        stage: 'business-rules',
        reason: 'refund over the $500 limit',
      }),
    ]);
    // The lookup of the same order is another tool: not part of "who refunded".
    expect([...answer.did, ...answer.tried].map((e) => e.principalId)).not.toContain('user-7');
  });

  it('prints the same answer as two tables', async () => {
    const r = await run(['audit', 'who', 'O-5512', '--tool', 'issue_refund']);
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout).toMatch(
      /DID \(1\)[^]*agent-ann +did +SUCCESS[^]*TRIED \(2\)[^]*agent-bob +refused[^]*agent-eve +refused/,
    );
  });
});

describe('audit query against Postgres', () => {
  it('filters by resource, outcome and time window', async () => {
    const ids = async (...argv: string[]) =>
      (await run(['audit', 'query', '--tenant', tenant, ...argv, '--json']))
        .json<{ records: { record: { callId: string } }[] }>()
        .records.map((r) => r.record.callId);
    expect(await ids('--resource', `${tenant}:order:O-5512`)).toEqual([
      'refund-1',
      'refund-2',
      'refund-3',
      'look-1',
    ]);
    expect(await ids('--outcome', 'POLICY_VIOLATION')).toEqual(['refund-3']);
    expect(await ids('--from', '2025-03-01T09:01:00Z', '--to', '2025-03-01T09:03:00Z')).toEqual([
      'refund-2',
      'refund-3',
    ]);
    expect(await ids('--tool', 'issue_refund', '--desc', '--limit', '1')).toEqual(['refund-3']);
  });
});

describe('audit verify against Postgres', () => {
  it('reports progress over pages of a long chain and every link intact', async () => {
    const long = uniqueName('long');
    const batch = Array.from({ length: 2_500 }, (_, i) =>
      envelope(auditRecord({ tenant: long }), { recordedAtMs: T + i }),
    );
    await store.append(batch);
    const r = await run(['audit', 'verify', '--chain', long, '--progress-every', '1000']);
    expect(r.code).toBe(EXIT.ok);
    // The Postgres store reads 1000 records a page; progress is reported per page read.
    expect(r.stderr).toBe(
      `verify: 1000 records checked (chain ${long})\nverify: 2000 records checked (chain ${long})\n`,
    );
    expect(r.stdout).toContain('OK: 2500 records in 1 chain verified; every link holds.');
  });

  it('exits 0 while intact, then 1 naming the seq a superuser edited behind the triggers', async () => {
    const ok = await run(['audit', 'verify', '--chain', tenant, '--json']);
    expect(ok.code).toBe(EXIT.ok);
    expect(ok.json()).toMatchObject({ ok: true, checked: 4, heads: { [tenant]: { seq: 4 } } });

    // What only a superuser or the table owner can do: switch the append-only triggers off.
    const client = await db.pool.connect();
    try {
      await client.query('ALTER TABLE audit_records DISABLE TRIGGER USER');
      await client.query(
        `UPDATE audit_records SET body = jsonb_set(body, '{principalId}', '"agent-mallory"')
         WHERE chain = $1 AND seq = 2`,
        [tenant],
      );
    } finally {
      await client.query('ALTER TABLE audit_records ENABLE ALWAYS TRIGGER audit_records_refuse_rows');
      await client.query('ALTER TABLE audit_records ENABLE ALWAYS TRIGGER audit_records_refuse_statements');
      client.release();
    }

    const broken = await run(['audit', 'verify', '--chain', tenant]);
    expect(broken.code).toBe(EXIT.failure);
    expect(broken.stdout).toContain(`BROKEN: chain ${tenant}, seq 2: hash-mismatch`);
    const json = await run(['audit', 'verify', '--json']);
    expect(json.code).toBe(EXIT.failure);
    expect(json.json()).toMatchObject({
      ok: false,
      chain: tenant,
      firstBrokenSeq: 2,
      reason: 'hash-mismatch',
    });

    // The installed entry point gives the same exit code and message to a shell.
    const root = join(import.meta.dirname, '../../..');
    const proc = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'services/cli/main.ts', 'audit', 'verify', '--chain', tenant],
      {
        cwd: root,
        env: { ...process.env, ...env },
        encoding: 'utf8',
      },
    );
    expect(proc.status).toBe(EXIT.failure);
    expect(proc.stdout).toContain(`BROKEN: chain ${tenant}, seq 2: hash-mismatch`);
  });
});

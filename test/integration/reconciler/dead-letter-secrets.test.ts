import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCallRequestedEvent } from '../../../libs/events/contracts.js';
import type { ReconciliationCase } from '../../../libs/ports/case-store.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import { consumeMessages, type ConsumedMessage } from '../../helpers/kafka.js';
import { scanForSecrets, type SecretFinding } from '../../helpers/secrets-scan.js';
import { cli } from '../../unit/cli/capture.js';
import { eventually } from '../audit-sink/event-stack.js';
import { freshSecrets, startOperatorStack, type OperatorStack, type TransferArgs } from './operator-stack.js';

/**
 * Arguments carrying an API key and a password, on real Kafka, Postgres and Redis: a call whose
 * outcome is unknown (UNRESOLVED) and one that failed after its retries (EXHAUSTED) are
 * dead-lettered and become cases. Neither secret may appear in any byte of the dead-letter topic,
 * any row of the cases table, or what `toolgate dlq list` / `dlq show` print (table and --json) —
 * only the tool's audit allow-listed fields (account, amount) travel past the calls topic. A
 * redrive still re-submits the call with its full original arguments, read back from the calls
 * topic: the tool receives the credentials it needs.
 */
let s: OperatorStack;
const secrets: Record<string, string> = {};
let unresolved: { request: ToolCallRequestedEvent; args: TransferArgs; case: ReconciliationCase };
let exhausted: { request: ToolCallRequestedEvent; args: TransferArgs; case: ReconciliationCase };
let poison: ReconciliationCase;

beforeAll(async () => {
  s = await startOperatorStack('dl_secrets');
  const u = await s.request('acct-unresolved', 'hangs');
  const e = await s.request('acct-exhausted', 'fails');
  Object.assign(secrets, {
    'UNRESOLVED api_key': u.args.api_key,
    'UNRESOLVED password': u.args.password,
    'EXHAUSTED api_key': e.args.api_key,
    'EXHAUSTED password': e.args.password,
  });
  // And a call that cannot even be decoded (its magic byte broken), its arguments in its bytes.
  const p = await s.request('acct-poison', 'fails');
  Object.assign(secrets, { 'POISON api_key': p.args.api_key, 'POISON password': p.args.password });
  const bytes = await s.stack.codec.encode('calls', p.request);
  bytes[0] = 0x07;
  await s.stack.bus.publish(s.stack.topics.calls, [{ key: p.request.resourceKey, value: bytes }]);
  await s.publish([u.request, e.request]);
  // The UNRESOLVED call's tool has no status check: after its first check the case needs a person.
  unresolved = { ...u, case: await s.caseIn(u.request.callId, 'needs_manual') };
  exhausted = { ...e, case: await s.caseIn(e.request.callId, 'needs_manual') };
  poison = await eventually('the POISON case', async () =>
    (await s.cases.list({})).find((c) => c.reason === 'POISON'),
  );
}, 120_000);

afterAll(async () => {
  await s?.close();
}, 60_000);

async function dlqMessages(): Promise<ConsumedMessage[]> {
  const admin = await s.stack.kafka.admin();
  const ends = await admin.fetchTopicOffsets(s.stack.topics.dlq);
  const count = ends.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  const consumer = s.stack.kafka.consumer({
    groupId: s.stack.kafka.uniqueGroupId('dl_secrets_dlq'),
    maxWaitTimeInMs: 100,
  });
  return consumeMessages(consumer, s.stack.topics.dlq, count);
}

const messageText = (m: ConsumedMessage): string =>
  [
    m.key?.toString('latin1') ?? '',
    m.value?.toString('latin1') ?? '',
    ...Object.entries(m.headers ?? {}).map(([k, v]) => `${k}=${String(v)}`),
  ].join('\n');

describe('secrets in the arguments of dead-lettered calls', () => {
  it('are in no dead letter, no case row and no dlq list/show output', async () => {
    const findings: SecretFinding[] = [];

    const letters = await dlqMessages();
    expect(letters.length).toBeGreaterThanOrEqual(2);
    for (const m of letters)
      scanForSecrets(`dlq ${m.partition}@${m.offset}`, messageText(m), secrets, findings);

    const { rows } = await s.db.pool.query<{ row: string }>(
      'SELECT row_to_json(c)::text AS row FROM reconciliation_cases c',
    );
    expect(rows.length).toBe(3);
    for (const [i, r] of rows.entries())
      scanForSecrets(`reconciliation_cases row ${i}`, r.row, secrets, findings);

    const outputs: Array<[string, readonly string[]]> = [
      ['dlq list', ['dlq', 'list']],
      ['dlq list --json', ['dlq', 'list', '--json']],
    ];
    for (const c of [unresolved.case, exhausted.case, poison]) {
      outputs.push([`dlq show ${c.reason}`, ['dlq', 'show', c.caseId]]);
      outputs.push([`dlq show ${c.reason} --json`, ['dlq', 'show', c.caseId, '--json']]);
    }
    for (const [what, argv] of outputs) {
      const run = await cli(argv, { env: s.env });
      expect(run.code, `${what}: ${run.stderr}`).toBe(EXIT.ok);
      scanForSecrets(what, run.stdout + run.stderr, secrets, findings);
    }
    expect(findings).toEqual([]);

    // What is kept: the allow-listed fields, the others marked redacted.
    const shown = (await cli(['dlq', 'show', exhausted.case.caseId, '--json'], { env: s.env })).json();
    expect(shown.request.arguments).toEqual({
      account: 'acct-exhausted',
      amount: 25,
      api_key: '[redacted]',
      password: '[redacted]',
      first_run: '[redacted]',
    });
  });

  it('a redrive through the CLI re-submits the full original arguments: the tool gets the credentials', async () => {
    expect(s.runs(exhausted.request.idempotencyKey)).toBe(1);
    const run = await cli(
      [
        'dlq',
        'redrive',
        exhausted.case.caseId,
        '--by',
        'ann',
        '--note',
        'vault is back; re-submit',
        '--assertion',
        await s.assertion(),
        '--json',
      ],
      { env: s.env },
    );
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(run.json()).toMatchObject({ ok: true, resubmitted: true });
    const findings: SecretFinding[] = [];
    scanForSecrets('dlq redrive output', run.stdout + run.stderr, secrets, findings);
    expect(findings).toEqual([]);

    const runs = await eventually('the re-submission ran', () => {
      const got = s.ledger.get(exhausted.request.idempotencyKey) ?? [];
      return got.length >= 2 ? got : undefined;
    });
    expect(runs[1]).toEqual(exhausted.args);
    expect(runs[1]!.api_key).toBe(secrets['EXHAUSTED api_key']);
    expect(runs[1]!.password).toBe(secrets['EXHAUSTED password']);
  });

  it('a dead letter written before redaction (full arguments) is still read and redriven', async () => {
    // The old form: the request summary with the arguments as sent and no redaction marker.
    const { request, args } = await s.request('acct-legacy', 'fails', freshSecrets());
    const c = await s.cases.openFromDeadLetter({
      deadLetterId: `EXHAUSTED:${request.callId}`,
      reason: 'EXHAUSTED',
      callId: request.callId,
      tenant: request.tenant,
      tool: request.tool,
      idempotencyKey: request.idempotencyKey,
      resourceKey: request.resourceKey,
      principalId: 'agent-9',
      traceId: request.traceId,
      requestJson: JSON.stringify({ ...request, principalAssertion: undefined, arguments: args }),
      errorCode: 'SERVER_ERROR',
      errorMessage: 'The downstream service failed.',
      attemptsJson: '[]',
      lastKnownStateJson: null,
      originalTopic: s.stack.topics.calls,
      originalPartition: 0,
      originalOffset: '0',
      createdAtMs: Date.now(),
    });
    // An EXHAUSTED case goes to a person: the stack's reconciler moves it there on its own first
    // visit, so the move here may find it moved already. Either way it ends in needs_manual.
    await s.cases.transition(
      c.case.caseId,
      { to: 'needs_manual', by: 'status-check', note: 'EXHAUSTED: a person decides' },
      'open',
    );
    expect((await s.caseIn(request.callId, 'needs_manual')).caseId).toBe(c.case.caseId);
    const redriven = await s.ops.redrive(c.case.caseId, {
      by: 'ann',
      note: 'old dead letter, re-submit',
      principalAssertion: await s.assertion(),
    });
    expect(redriven).toMatchObject({ ok: true, resubmitted: true });
    const runs = await eventually('the legacy re-submission ran', () => {
      const got = s.ledger.get(request.idempotencyKey) ?? [];
      return got.length >= 1 ? got : undefined;
    });
    expect(runs[0]).toEqual(args);
  });
});

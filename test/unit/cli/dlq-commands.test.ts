import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { argumentsFingerprint } from '../../../libs/core/idempotency-key.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import { cli } from './capture.js';
import { dlqFixture, T0, type DlqFixture } from './dlq-fixture.js';

/**
 * The dlq commands over the reconciliation operations built on in-memory stores and bus; the
 * Postgres/Kafka/Redis wiring is covered in test/integration/cli.
 */
let f: DlqFixture;
const run = (argv: string[]) => cli(['dlq', ...argv], { operations: f.ops, clock: f.clock });
/** `dlq resolve <caseId> --outcome <outcome> --by <by> --note <note>`, then `more` flags. */
const resolve = (
  caseId: string,
  outcome: 'succeeded' | 'failed',
  by: string,
  note: string,
  ...more: string[]
) => run(['resolve', caseId, '--outcome', outcome, '--by', by, '--note', note, ...more]);
/** Moves an open case to needs_manual, as the status checks do when they give up. */
const toManual = (caseId: string, note: string) =>
  f.cases.transition(caseId, { to: 'needs_manual', by: 'status-check', note }, 'open');

beforeEach(async () => {
  f = await dlqFixture();
});
afterEach(async () => {
  await f.close();
});

describe('dlq list', () => {
  it('lists cases oldest first, filtered by state, tenant and tool, as a table or JSON', async () => {
    const a = await f.open();
    await f.clock.advance(1_000);
    const b = await f.open();
    await toManual(b.caseId, 'checks exhausted');
    const all = await run(['list']);
    expect(all.code).toBe(EXIT.ok);
    const lines = all.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^CASE +STATE +REASON +TOOL +TENANT +RESOURCE +CREATED +NEXT CHECK$/);
    expect(lines[2]).toMatch(
      new RegExp(
        `^${a.caseId} +open +UNRESOLVED +issue_refund +t1 +t1:order:O-5512 +2025-03-01T12:00:00.000Z +2025-03-01T12:00:00.000Z$`,
      ),
    );
    expect(lines[3]).toMatch(new RegExp(`^${b.caseId} +needs_manual +UNRESOLVED .* +-$`));
    expect(lines.at(-1)).toBe('2 cases.');

    const manual = await run(['list', '--state', 'needs_manual', '--json']);
    expect(manual.json<{ cases: { caseId: string }[] }>().cases.map((c) => c.caseId)).toEqual([b.caseId]);
    expect((await run(['list', '--tenant', 't2'])).stdout).toBe('No cases match.\n');
    expect((await run(['list', '--tool', 'issue_refund', '--json'])).json<{ count: number }>().count).toBe(2);
  });

  it('--due lists open cases whose next check is due now', async () => {
    const a = await f.open();
    await f.cases.transition(
      a.caseId,
      { to: 'open', by: 'status-check', note: 'unknown', nextCheckAtMs: T0 + 60_000 },
      {
        state: 'open',
        version: a.version,
      },
    );
    const b = await f.open();
    const due = await run(['list', '--due', '--json']);
    expect(due.json<{ cases: { caseId: string }[] }>().cases.map((c) => c.caseId)).toEqual([b.caseId]);
    await f.clock.advance(60_000);
    expect((await run(['list', '--due', '--json'])).json<{ count: number }>().count).toBe(2);
    const conflict = await run(['list', '--due', '--state', 'needs_manual']);
    expect(conflict.code).toBe(EXIT.usage);
  });
});

describe('dlq show', () => {
  it('shows the case, its request and what can be done next', async () => {
    const c = await f.open();
    const r = await run(['show', c.caseId]);
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout).toMatch(new RegExp(`^case: +${c.caseId}\n`));
    expect(r.stdout).toMatch(/\nerror: +TIMEOUT: The payments service did not answer in time\.\n/);
    expect(r.stdout).toMatch(/\narguments: +\{"amountCents":1200,"orderId":"O-5512"\}\n/);
    expect(r.stdout).toContain('\nStatus checks (0):\n  none\n\nHistory (0):\n  none\n\n');
    expect(r.stdout).toContain(
      `Next: toolgate dlq resolve ${c.caseId} --outcome succeeded|failed --by <you> --note "<why>"`,
    );
    const json = await run(['show', c.callId!, '--call', '--json']);
    expect(json.json()).toMatchObject({
      case: { caseId: c.caseId },
      actions: ['resolveByHand'],
      request: { callId: c.callId },
    });
  });

  it('exits 1 for a case that does not exist', async () => {
    const r = await run(['show', 'no-such-case']);
    expect(r.code).toBe(EXIT.failure);
    expect(r.stderr).toContain('toolgate: no case no-such-case.');
  });
});

describe('dlq resolve', () => {
  it('resolves by hand: the case moves, the UNRESOLVED record is settled, audit and result go out', async () => {
    const c = await f.open();
    await f.unresolved(c.idempotencyKey!, { orderId: 'O-5512', amountCents: 1200 });
    const r = await resolve(
      c.caseId,
      'succeeded',
      'ann',
      'payments ledger shows refund R-88',
      '--result',
      '{"refundId":"R-88","amountCents":1200}',
    );
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout).toContain(`Resolved: case ${c.caseId} is now resolved_succeeded (version 2).`);
    expect(r.stdout).toContain('idempotency record settled: yes');
    expect(r.stdout).toContain('audit record published:     yes');
    expect(r.stdout).toContain('result sent to requester:   yes');
    const stored = await f.cases.get(c.caseId);
    expect(stored?.resolution).toMatchObject({
      by: 'operator:ann',
      note: 'payments ledger shows refund R-88',
    });
    // A retry of the call is now answered with the verdict.
    const retry = await f.idempotency.claim(
      c.idempotencyKey!,
      argumentsFingerprint({ orderId: 'O-5512', amountCents: 1200 }),
      'executor-2',
      60_000,
    );
    expect(retry).toMatchObject({
      kind: 'completed',
      stored: { outcome: 'SUCCESS', result: { refundId: 'R-88' } },
    });
  });

  it('refuses a second resolution (exit 1) and writes nothing', async () => {
    const c = await f.open();
    expect((await resolve(c.caseId, 'failed', 'ann', 'no refund exists')).code).toBe(EXIT.ok);
    const again = await resolve(c.caseId, 'succeeded', 'bob', 'I think it did', '--json');
    expect(again.code).toBe(EXIT.failure);
    expect(again.stdout).toBe('');
    expect(JSON.parse(again.stderr).error.message).toContain(`cannot resolve case ${c.caseId}:`);
    expect((await f.cases.get(c.caseId))?.version).toBe(2);
  });

  it('a result that does not fit the tool is a usage error, and nothing moves', async () => {
    const c = await f.open();
    const r = await resolve(c.caseId, 'succeeded', 'ann', 'x', '--result', '{"id":1}');
    expect(r.code).toBe(EXIT.usage);
    expect(r.stderr).toContain(
      "the result does not match issue_refund@1.0.0's output schema (invalid-result)",
    );
    expect((await f.cases.get(c.caseId))?.state).toBe('open');
  });

  it('checks --by, --note and --result before doing anything', async () => {
    const c = await f.open();
    const base = ['resolve', c.caseId, '--outcome', 'failed'];
    expect((await run([...base, '--by', 'ann smith', '--note', 'x'])).stderr).toContain(
      '--by must name you without spaces',
    );
    expect((await run([...base, '--by', 'ann', '--note', '  '])).stderr).toContain('--note must say why.');
    expect((await run([...base, '--by', 'ann', '--note', 'x', '--result', '{}'])).stderr).toContain(
      'a failed resolution carries no --result.',
    );
    expect((await resolve(c.caseId, 'succeeded', 'ann', 'x', '--result', '{')).stderr).toContain(
      '--result is not valid JSON.',
    );
    const missing = await run(['resolve', c.caseId, '--outcome', 'failed', '--note', 'x']);
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toContain('missing required option --by <operator>.');
    expect((await f.cases.get(c.caseId))?.version).toBe(1);
  });
});

describe('dlq redrive', () => {
  it('refuses to redrive an UNRESOLVED call of a retry-safety none tool, says why, and changes nothing', async () => {
    const c = await f.open();
    await toManual(c.caseId, 'checks exhausted');
    const before = await f.cases.get(c.caseId);
    const shown = await run(['show', c.caseId]);
    expect(shown.stdout).not.toContain(`toolgate dlq redrive ${c.caseId}`);
    expect(shown.stdout).toContain('no redrive: issue_refund@1.0.0 has retry safety "none"');
    const r = await run(['redrive', c.caseId, '--by', 'operator:ann', '--note', 'payments is back']);
    expect(r.code).toBe(EXIT.failure);
    expect(r.stderr).toContain('has retry safety "none"');
    expect(r.stderr).toContain('(not-redrivable)');
    expect(await f.cases.get(c.caseId)).toEqual(before);
  });

  it('POISON without its request: the hints offer what a person can do, never a redrive that would fail', async () => {
    const c = await f.open({ reason: 'POISON', callId: null, requestJson: null, rawPayloadBase64: 'AAEC' });
    await toManual(c.caseId, 'POISON: the event could not be handled');
    const shown = await run(['show', c.caseId]);
    const next = shown.stdout.slice(shown.stdout.indexOf('Next:'));
    expect(next).not.toContain('toolgate dlq redrive');
    expect(next).toContain('inspect the raw event');
    expect(next).toContain(`toolgate dlq resolve ${c.caseId}`);
    expect(next).toContain('no redrive: the original request (with its arguments) is not available');
    const redrive = await run(['redrive', c.caseId, '--by', 'ann', '--note', 'again']);
    expect(redrive.code).toBe(EXIT.failure);
    expect(redrive.stderr).toContain('(not-redrivable)');
    const resolved = await resolve(c.caseId, 'failed', 'ann', 'garbage event');
    expect(resolved.code).toBe(EXIT.ok);
  });

  it('POISON with its request: the redrive hint asks for the assertion a re-submission needs', async () => {
    const c = await f.open({ reason: 'POISON' });
    await toManual(c.caseId, 'POISON: schema mismatch');
    const shown = await run(['show', c.caseId]);
    expect(shown.stdout).toContain(
      `toolgate dlq redrive ${c.caseId} --by <you> --note "<why>" --assertion-file`,
    );
    const r = await run(['redrive', c.caseId, '--by', 'ann', '--note', 'fixed the schema']);
    expect(r.code).toBe(EXIT.usage);
    expect(r.stderr).toContain('(needs-assertion)');
  });

  it('shows every history note in full, however long, wrapped to the width', async () => {
    const c = await f.open();
    const note = `checks exhausted, so only a person can tell; ${'look at the payments ledger '.repeat(8)}END-OF-NOTE`;
    await toManual(c.caseId, note);
    const r = await cli(['dlq', 'show', c.caseId], {
      operations: f.ops,
      clock: f.clock,
      env: { COLUMNS: '80' },
    });
    expect(r.code).toBe(EXIT.ok);
    const history = r.stdout.slice(r.stdout.indexOf('History'), r.stdout.indexOf('Next:'));
    expect(history.split('\n').every((line) => line.length <= 80)).toBe(true);
    // Every word of the note is there, in order, across the wrapped lines.
    const words = history
      .slice(history.indexOf('note:') + 'note:'.length)
      .split(/\s+/)
      .filter(Boolean);
    expect(words.join(' ')).toBe(note.trim());
    expect(history).not.toContain('…');
  });

  it('refuses an open case (exit 1) and a re-submission without an assertion (exit 2)', async () => {
    const open = await f.open();
    const r = await run(['redrive', open.caseId, '--by', 'ann', '--note', 'again']);
    expect(r.code).toBe(EXIT.failure);
    expect(r.stderr).toContain('a open case cannot be redriven (not-allowed)');

    const exhausted = await f.open({ reason: 'EXHAUSTED', errorCode: 'UPSTREAM_5XX' });
    await toManual(exhausted.caseId, 'exhausted');
    const noAssertion = await run(['redrive', exhausted.caseId, '--by', 'ann', '--note', 're-submit']);
    expect(noAssertion.code).toBe(EXIT.usage);
    expect(noAssertion.stderr).toContain(
      'needs a signed principal assertion (dead letters do not keep one) (needs-assertion)',
    );
    expect((await f.cases.get(exhausted.caseId))?.state).toBe('needs_manual');
  });
});

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { argumentsFingerprint } from '../../../libs/core/idempotency-key.js';
import type { ReconciliationCase } from '../../../libs/ports/case-store.js';
import type { StoredResult } from '../../../libs/ports/idempotency-store.js';
import { applyTransition } from '../../../libs/reconcile/case-model.js';
import type { CaseRequest } from '../../../libs/reconcile/case-request.js';
import { automaticRedrives } from '../../../libs/reconcile/check-schedule.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import type { ReconcilerDeps } from '../../../services/reconciler/reconciler.js';
import {
  resubmissionPrincipal,
  resubmissionSigner,
} from '../../../services/reconciler/resubmission-signer.js';
import { generateKeyPairSync } from 'node:crypto';
import { createPrincipalVerifier } from '../../../libs/auth/principal-verifier.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { closeAfterEach } from '../../helpers/close-after-each.js';
import {
  createHarness,
  deadLetter,
  eventually,
  neverRuns,
  reconciledTool,
  T0,
  UNRESOLVED_RECORD,
  type Harness,
} from './harness.js';

/**
 * The reconciler redrives an UNRESOLVED call of a tool that forwards its idempotency key by itself:
 * re-submitted with its original key, a bounded number of times, audited as automatic; the
 * executor's answer then settles the case as after a person's redrive.
 */
const ARGS = { taxpayerId: 'TP-1', year: 2024 };
const FP = argumentsFingerprint(ARGS);
const DAY_MS = 86_400_000;
/** The reconciler's grace before it first reads a re-submission's answer, in these tests. */
const GRACE_MS = 5_000;
/** The first status-check wait of the default schedule: when a fresh case is first visited. */
const FIRST_VISIT_MS = 1_000;
const ASSERTION = 'eyJhbGciOiJFZERTQSJ9.auto.sig';

let h: Harness;
closeAfterEach(() => h);

/** What the signer was asked for: the request and the tool version of each re-submission. */
let signed: Array<{ request: CaseRequest; tool: ToolDefinition }>;

const keyOf = (callId: string): string => `tg1:key-${callId}`;
const stored = (outcome: string, result: unknown): StoredResult => ({
  outcome,
  result,
  completedAtMs: T0 + 100,
});

/** A harness whose reconciler signs re-submissions, with `move_funds` (forwards-key) registered. */
async function harness(overrides: Partial<ReconcilerDeps> = {}): Promise<Harness> {
  signed = [];
  const made = await createHarness({
    resubmitGraceMs: GRACE_MS,
    resubmissionAssertion: (request, tool) => {
      signed.push({ request, tool });
      return Promise.resolve(ASSERTION);
    },
    ...overrides,
  });
  made.registry.register(moveFunds('1.0.0', 'forwards-key'));
  return made;
}

/** `move_funds` at `version` with retry safety `kind`, on the filing call's arguments. */
function moveFunds(version: string, kind: 'forwards-key' | 'none'): ToolDefinition {
  return defineTool({
    name: 'move_funds',
    version,
    description: 'Move funds; the bank deduplicates on the forwarded key.',
    input: z.object({ taxpayerId: z.string(), year: z.number() }),
    output: z.object({ movementId: z.string() }),
    scopes: ['payments:move'],
    owner: 'payments-team',
    retrySafety: { kind },
    execute: neverRuns,
  }) as unknown as ToolDefinition;
}

/** Opens the UNRESOLVED case of `move_funds` call `callId` (its record UNRESOLVED) and triages it. */
async function openCase(callId: string, tool = 'move_funds'): Promise<ReconciliationCase> {
  await h.recordUnresolved(keyOf(callId), ARGS);
  await h.reconciler.start();
  await h.publishDeadLetter(deadLetter(h.topics, { callId, tool, args: ARGS }));
  return h.triaged({ callId });
}

/**
 * What the executor leaves for a re-submission: its claim, completed with `answer`. It runs 1 ms
 * after the redrive, once the retired UNRESOLVED answer has expired.
 */
async function executorAnswers(callId: string, answer: StoredResult): Promise<void> {
  await h.clock.advance(1);
  const claim = await h.idempotency.claim(keyOf(callId), FP, 'executor-1', 60_000);
  expect(claim.kind).toBe('claimed');
  expect(await h.idempotency.complete(keyOf(callId), 'executor-1', answer, DAY_MS)).toBe(true);
}

async function caseOf(callId: string): Promise<ReconciliationCase> {
  const c = await h.cases.get({ callId });
  if (c === undefined) throw new Error(`no case for ${callId}`);
  return c;
}

/** The re-submissions of `callId` published to the calls topic so far. */
const resubmissions = (callId: string) => h.calls.filter((e) => e.callId === callId);

describe('automatic redrive of a forwards-key call whose outcome is unknown', () => {
  it('re-submits it with its original key at its first visit, audited as automatic with the reason', async () => {
    h = await harness();
    await openCase('c-auto');
    await h.clock.advance(FIRST_VISIT_MS);

    const c = await caseOf('c-auto');
    expect(c.state).toBe('open');
    expect(c.nextCheckAtMs).toBe(T0 + FIRST_VISIT_MS + GRACE_MS);
    expect(c.history.at(-1)).toEqual({
      from: 'open',
      to: 'open',
      by: 'status-check',
      note: expect.stringMatching(
        /^automatic redrive 1 of 2: the outcome is unknown and move_funds@1\.0\.0 has no status check; re-submitted with its original idempotency key/,
      ),
      atMs: T0 + FIRST_VISIT_MS,
      autoRedrive: true,
    });
    expect(automaticRedrives(c)).toBe(1);
    expect(c.statusChecks).toEqual([]);

    // The same call again: same call id, idempotency key and reply address, full arguments, the
    // signed assertion, no deadline.
    await eventually(() => resubmissions('c-auto').length === 1 || undefined);
    expect(resubmissions('c-auto')[0]).toMatchObject({
      callId: 'c-auto',
      providerCallId: 'prov-c-auto',
      tool: 'move_funds',
      idempotencyKey: keyOf('c-auto'),
      argumentsJson: JSON.stringify(ARGS),
      principalAssertion: ASSERTION,
      replyTopic: h.topics.results,
      replyPartition: 2,
      deadlineMs: null,
      requestedAtMs: T0 + FIRST_VISIT_MS,
    });
    expect(signed).toHaveLength(1);
    expect(signed[0]!.request.callId).toBe('c-auto');
    expect(signed[0]!.tool).toMatchObject({ name: 'move_funds', version: '1.0.0' });

    // Its UNRESOLVED answer was retired, so the executor claims the re-submission afresh and runs it.
    await h.clock.advance(1);
    expect(await h.idempotency.claim(keyOf('c-auto'), FP, 'executor-1', 60_000)).toMatchObject({
      kind: 'claimed',
    });

    await eventually(() => h.audits.length === 1 || undefined);
    expect(h.audits[0]).toMatchObject({
      recordId: `reconciler:${c.caseId}:v${c.version}`,
      callId: 'c-auto',
      source: 'reconciler',
      producerId: 'reconciler-1',
      principalId: 'u-42',
      outcome: 'UNRESOLVED',
      decisions: [
        {
          stage: 'execute',
          decision: 'short-circuit',
          reason: expect.stringMatching(
            /^re-submitted automatically by the reconciler \(automatic redrive 1 of 2\): the outcome is unknown and move_funds@1\.0\.0 has no status check; the executor answers the call$/,
          ),
        },
      ],
    });
    expect(h.results).toHaveLength(0);
  });

  it("is settled by the executor's answer as a person's redrive is: SUCCESS → succeeded, nothing answered again", async () => {
    h = await harness();
    await openCase('c-settled');
    await h.clock.advance(FIRST_VISIT_MS);
    const answer = stored('SUCCESS', { movementId: 'M-1' });
    await executorAnswers('c-settled', answer);
    await h.clock.advance(GRACE_MS);

    const c = await caseOf('c-settled');
    expect(c.state).toBe('resolved_succeeded');
    expect(c.resolution).toMatchObject({
      by: 'status-check',
      note: expect.stringMatching(/idempotency record answers SUCCESS \(move_funds@1\.0\.0\)/),
    });
    expect(c.statusChecks).toEqual([
      { atMs: T0 + FIRST_VISIT_MS + GRACE_MS, answer: { state: 'applied', result: { movementId: 'M-1' } } },
    ]);
    // The executor answered the call; the reconciler neither answers it nor settles the record.
    expect(h.results).toHaveLength(0);
    expect(await h.idempotency.peek(keyOf('c-settled'))).toEqual({
      kind: 'completed',
      fingerprint: FP,
      stored: answer,
    });
    expect(resubmissions('c-settled')).toHaveLength(1);
  });

  it('a definite failure recorded by the executor → resolved_failed', async () => {
    h = await harness();
    await openCase('c-failed');
    await h.clock.advance(FIRST_VISIT_MS);
    await executorAnswers(
      'c-failed',
      stored('EXECUTION_ERROR', { code: 'CALLER_ERROR', message: 'account closed' }),
    );
    await h.clock.advance(GRACE_MS);
    const c = await caseOf('c-failed');
    expect(c.state).toBe('resolved_failed');
    expect(c.resolution!.note).toMatch(/answers EXECUTION_ERROR \(CALLER_ERROR\): it was not carried out/);
    expect(h.results).toHaveLength(0);
  });

  it('UNRESOLVED again → redriven again, up to its limit (2), then a person, saying why', async () => {
    h = await harness();
    await openCase('c-again');
    await h.clock.advance(FIRST_VISIT_MS);
    await executorAnswers('c-again', UNRESOLVED_RECORD);
    await h.clock.advance(GRACE_MS);

    let c = await caseOf('c-again');
    expect(c.state).toBe('open');
    expect(c.history.at(-1)).toMatchObject({
      autoRedrive: true,
      note: expect.stringMatching(/^automatic redrive 2 of 2: the re-submitted call ended UNRESOLVED again;/),
    });
    expect(automaticRedrives(c)).toBe(2);
    await eventually(() => resubmissions('c-again').length === 2 || undefined);

    await executorAnswers('c-again', UNRESOLVED_RECORD);
    await h.clock.advance(GRACE_MS);
    c = await caseOf('c-again');
    expect(c.state).toBe('needs_manual');
    const note = c.history.at(-1)!.note;
    expect(note).toMatch(/^The call was re-submitted and ended UNRESOLVED again/);
    expect(note).toMatch(
      /Re-sending it with the same key is safe, but the reconciler has redriven it by itself 2 times, its limit\./,
    );
    expect(automaticRedrives(c)).toBe(2);
    // Nothing more is sent, however long it waits.
    await h.clock.advance(120_000);
    expect(resubmissions('c-again')).toHaveLength(2);
    expect(signed).toHaveLength(2);
    expect((await caseOf('c-again')).state).toBe('needs_manual');
  });

  it('the limit is configurable: autoRedriveMax 1 → one automatic redrive, then a person', async () => {
    h = await harness({ autoRedriveMax: 1 });
    await openCase('c-one');
    await h.clock.advance(FIRST_VISIT_MS);
    expect((await caseOf('c-one')).history.at(-1)!.note).toMatch(/^automatic redrive 1 of 1:/);
    await executorAnswers('c-one', UNRESOLVED_RECORD);
    await h.clock.advance(GRACE_MS);
    const c = await caseOf('c-one');
    expect(c.state).toBe('needs_manual');
    expect(c.history.at(-1)!.note).toMatch(/redriven it by itself 1 time, its limit/);
    await eventually(() => resubmissions('c-one').length === 1 || undefined);
  });

  it('autoRedriveMax 0 turns it off: a person, as before, told that re-sending is safe', async () => {
    h = await harness({ autoRedriveMax: 0 });
    await openCase('c-off');
    await h.clock.advance(FIRST_VISIT_MS);
    const c = await caseOf('c-off');
    expect(c.state).toBe('needs_manual');
    expect(c.history.at(-1)!.note).toMatch(
      /^move_funds@1\.0\.0 has no status check \(retry safety "forwards-key"\), so only a person can tell whether the effect happened\. Re-sending it with the same key is safe, but automatic redrives are off \(limit 0\)\./,
    );
    expect(signed).toHaveLength(0);
    expect(h.calls).toHaveLength(0);
  });

  it('without a way to sign a re-submission: a person, saying so; the record stays UNRESOLVED', async () => {
    h = await harness({ resubmissionAssertion: undefined });
    await openCase('c-unsigned');
    await h.clock.advance(FIRST_VISIT_MS);
    const c = await caseOf('c-unsigned');
    expect(c.state).toBe('needs_manual');
    expect(c.history.at(-1)!.note).toMatch(/no principal assertion to re-submit it with \(no signing key\)/);
    expect(h.calls).toHaveLength(0);
    expect(await h.claimAgain('c-unsigned')).toMatchObject({
      kind: 'completed',
      stored: { outcome: 'UNRESOLVED' },
    });
  });

  it('a signer that fails: a person; nothing re-submitted, nothing moved before', async () => {
    h = await harness({ resubmissionAssertion: () => Promise.reject(new Error('key store down')) });
    await openCase('c-sign-fails');
    await h.clock.advance(FIRST_VISIT_MS);
    const c = await caseOf('c-sign-fails');
    expect(c.state).toBe('needs_manual');
    expect(c.history.map((e) => e.to)).toEqual(['open', 'needs_manual']);
    expect(c.history.at(-1)!.note).toMatch(/no principal assertion could be signed/);
    expect(h.calls).toHaveLength(0);
  });
});

describe('what the reconciler does not redrive by itself', () => {
  it('a tool with retry safety none: a person, even with a signer', async () => {
    h = await harness();
    h.registry.register(
      reconciledTool({
        name: 'close_account',
        description: 'Close an account.',
        input: z.object({ taxpayerId: z.string(), year: z.number() }),
        output: z.object({ closed: z.boolean() }),
        owner: 'payments-team',
      }),
    );
    await openCase('c-none', 'close_account');
    await h.clock.advance(FIRST_VISIT_MS);
    const c = await caseOf('c-none');
    expect(c.state).toBe('needs_manual');
    const note = c.history.at(-1)!.note;
    expect(note).toMatch(/^close_account@1\.0\.0 has no status check \(retry safety "none"\)/);
    expect(note).not.toMatch(/Re-sending/);
    await h.clock.advance(120_000);
    expect(h.calls).toHaveLength(0);
    expect(signed).toHaveLength(0);
  });

  it('a call whose tool version no longer forwards the key for a re-submission: a person', async () => {
    h = await harness();
    // The call ran 1.0.0 (forwards-key); an unpinned re-submission would run the current 2.0.0,
    // which declares none.
    h.registry.register(moveFunds('2.0.0', 'none'));
    await openCase('c-changed');
    await h.clock.advance(FIRST_VISIT_MS);
    const c = await caseOf('c-changed');
    expect(c.state).toBe('needs_manual');
    expect(c.history.at(-1)!.note).toMatch(
      /^move_funds@1\.0\.0 has no status check \(retry safety "forwards-key"\)/,
    );
    expect(h.calls).toHaveLength(0);
    expect(signed).toHaveLength(0);
  });

  it("after a person's redrive answered UNRESOLVED again, the reconciler redrives it within its limit", async () => {
    let signing = false;
    h = await harness({
      autoRedriveMax: 1,
      resubmissionAssertion: () => Promise.resolve(signing ? ASSERTION : undefined),
    });
    await openCase('c-person');
    await h.clock.advance(FIRST_VISIT_MS);
    const manual = await caseOf('c-person');
    expect(manual.state).toBe('needs_manual');
    expect(manual.history.at(-1)!.note).toMatch(/no principal assertion could be signed/);

    const redriven = await h.ops.redrive(manual.caseId, {
      by: 'ann',
      note: 'the bank dedupes; run it again',
      principalAssertion: ASSERTION,
    });
    expect(redriven).toMatchObject({ ok: true, resubmitted: true });
    await executorAnswers('c-person', UNRESOLVED_RECORD);
    signing = true;
    await h.clock.advance(GRACE_MS);

    const c = await caseOf('c-person');
    expect(c.state).toBe('open');
    expect(c.history.at(-1)).toMatchObject({
      by: 'status-check',
      autoRedrive: true,
      note: expect.stringMatching(/^automatic redrive 1 of 1: the re-submitted call ended UNRESOLVED again/),
    });
    await eventually(() => resubmissions('c-person').length === 2 || undefined);
  });
});

describe('the case model: an automatic redrive', () => {
  const base = (): ReconciliationCase => ({
    caseId: 'case-1',
    deadLetterId: 'UNRESOLVED:c-1',
    callId: 'c-1',
    tenant: 't1',
    tool: 'move_funds',
    idempotencyKey: keyOf('c-1'),
    resourceKey: 't1:r',
    principalId: 'u-42',
    traceId: 'trace',
    reason: 'UNRESOLVED',
    state: 'open',
    context: {},
    attemptHistory: [],
    lastKnownState: null,
    statusChecks: [],
    nextCheckAtMs: T0,
    resolution: null,
    history: [],
    version: 1,
    createdAtMs: T0,
    updatedAtMs: T0,
  });
  const auto = {
    to: 'open',
    by: 'status-check',
    note: 'automatic redrive 1 of 2',
    autoRedrive: true,
  } as const;

  it('is the checker’s move of an open case to open, kept in the history and counted', () => {
    const moved = applyTransition(base(), { ...auto, nextCheckAtMs: T0 + GRACE_MS }, T0);
    expect(moved).toMatchObject({ ok: true, next: { state: 'open', nextCheckAtMs: T0 + GRACE_MS } });
    const next = moved.ok ? moved.next : base();
    expect(next.history).toEqual([
      { from: 'open', to: 'open', by: 'status-check', note: auto.note, atMs: T0, autoRedrive: true },
    ]);
    expect(automaticRedrives(next)).toBe(1);
    // An ordinary recheck carries no mark.
    const recheck = applyTransition(
      base(),
      { to: 'open', by: 'status-check', note: 'check 1', nextCheckAtMs: T0 + 1 },
      T0,
    );
    expect(recheck.ok && Object.keys(recheck.next.history[0]!)).not.toContain('autoRedrive');
  });

  it('is refused from a person, out of another state, without a note or next check, or with a check', () => {
    const refused = (c: ReconciliationCase, change: object): string | undefined => {
      const r = applyTransition(c, change as never, T0);
      return r.ok ? undefined : r.detail;
    };
    const next = { nextCheckAtMs: T0 + 1 };
    expect(refused(base(), { ...auto, ...next, by: 'operator:ann' })).toMatch(/the checker's move/);
    expect(refused({ ...base(), state: 'needs_manual' }, { ...auto, ...next })).toMatch(
      /only a person may move a case out of needs_manual/,
    );
    expect(refused(base(), { ...auto, ...next, to: 'needs_manual', nextCheckAtMs: undefined })).toMatch(
      /moves an open case to open/,
    );
    expect(refused(base(), { ...auto, ...next, note: ' ' })).toMatch(/needs a note/);
    expect(refused(base(), auto)).toMatch(/nextCheckAtMs/);
    expect(
      refused(base(), { ...auto, ...next, statusCheck: { atMs: T0, answer: { state: 'unknown' } } }),
    ).toMatch(/records no status check/);
    expect(refused(base(), { ...auto, ...next, autoRedrive: 'yes' })).toMatch(/must be true/);
  });
});

describe('the principal of an automatic re-submission', () => {
  it('is the reconciler acting for the call’s principal, in its tenant, with exactly the tool’s scopes', () => {
    expect(
      resubmissionPrincipal({ tenant: 't1', principalId: 'u-42' }, { scopes: ['payments:move'] }, 'rc-1'),
    ).toEqual({
      id: 'rc-1',
      tenant: 't1',
      kind: 'service',
      scopes: ['payments:move'],
      roles: [],
      onBehalfOf: 'u-42',
    });
    expect(
      resubmissionPrincipal({ tenant: 't1', principalId: null }, { scopes: [] }, 'rc-1'),
    ).not.toHaveProperty('onBehalfOf');
  });
});

describe('the signer of automatic re-submissions', () => {
  it('signs that principal with the configured key: the executors verify it, as of now', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const clock = new ManualClock(T0);
    const sign = resubmissionSigner(
      {
        keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        kid: 'rc-1',
        issuer: 'agent-backend',
        audience: 'executors',
      },
      'reconciler-1',
      clock,
    );
    const request = { tenant: 't1', principalId: 'u-42' } as CaseRequest;
    const token = await sign(request, moveFunds('1.0.0', 'forwards-key'));
    const verifier = createPrincipalVerifier({
      keys: { 'rc-1': publicKey },
      issuer: 'agent-backend',
      audience: 'executors',
      now: () => clock.now(),
    });
    expect(await verifier.verify(token, { atMs: T0 })).toEqual({
      id: 'reconciler-1',
      tenant: 't1',
      kind: 'service',
      scopes: ['payments:move'],
      roles: [],
      onBehalfOf: 'u-42',
    });
    // Short-lived: refused a few minutes on.
    await expect(verifier.verify(token, { atMs: T0 + 10 * 60_000 })).rejects.toThrow();
  });
});

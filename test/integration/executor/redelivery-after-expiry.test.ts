import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';
import { signPrincipal } from '../../../libs/auth/sign-principal.js';
import type { ToolCallRequestedEvent } from '../../../libs/events/contracts.js';
import type { Service } from '../../../libs/runtime/service.js';
import {
  createExecutorStack,
  AUDIENCE,
  ISSUER,
  KID,
  PRINCIPAL,
  type ExecutorStack,
} from './executor-stack.js';
import { startExecutorProcess, type ExecutorProcess } from './executor-process.js';
import { resultsFor, startLedgerService } from './ledger-service.js';
import { ledgerRows } from './ledger-tools.js';

/**
 * A redelivered call is judged as of when the broker accepted it, and a call that may have taken
 * effect is never answered "not run":
 *
 * - an executor process applies a state-changing call's effect and is SIGKILLed before answering;
 *   the call is redelivered after its short-lived principal assertion expired → the answer is not
 *   UNAUTHORIZED, and the tool ran exactly once (ledger);
 * - a call produced long after its assertion expired (a replay, even with a backdated producer
 *   timestamp) is still refused, and nothing runs;
 * - an executor that cannot trust message timestamps (it judges as of now) answers a call whose
 *   idempotency key already has a claim with "outcome unknown", never "not run".
 */

/** The verifier's default clock tolerance: an assertion is refused this long after its `exp`. */
const TOLERANCE_MS = 5_000;

let stack: ExecutorStack;
let child: ExecutorProcess | undefined;
const services: Service[] = [];

async function startService(s: ExecutorStack, id: string): Promise<string[]> {
  const started = await startLedgerService(s, id);
  services.push(started.service);
  return started.lines;
}

beforeAll(async () => {
  stack = await createExecutorStack('redeliv');
});

afterAll(async () => {
  if (child !== undefined && child.child.exitCode === null && child.child.signalCode === null) {
    child.child.kill('SIGKILL');
  }
  await Promise.all(services.splice(0).map((s) => s.stop()));
  await stack?.close();
});

const PRODUCER_TIME_WARNING = 'the calls topic keeps producer timestamps';

/** An assertion for PRINCIPAL valid for `ttlSeconds` from `issuedAtMs`. */
function assertion(ttlSeconds: number, issuedAtMs = Date.now()): Promise<string> {
  return assertionFor(stack, ttlSeconds, issuedAtMs);
}

/** The same, signed with the key of stack `s` (each stack has its own). */
function assertionFor(s: ExecutorStack, ttlSeconds: number, issuedAtMs = Date.now()): Promise<string> {
  return signPrincipal(PRINCIPAL, s.signingKey, {
    issuer: ISSUER,
    audience: AUDIENCE,
    kid: KID,
    ttlSeconds,
    now: () => issuedAtMs,
  });
}

/** Produces `request` raw, bypassing the bus, with the producer timestamp `timestampMs`. */
async function produceRaw(s: ExecutorStack, request: ToolCallRequestedEvent, timestampMs: number) {
  const producer = s.kafka.producer();
  await producer.connect();
  await producer.send({
    topic: s.topics.calls,
    messages: [
      {
        key: request.resourceKey,
        value: await s.codec.encode('calls', request),
        timestamp: String(timestampMs),
      },
    ],
  });
  await producer.disconnect();
}

async function untilLedger(s: ExecutorStack, rows: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await ledgerRows(s.db.pool)).length < rows) {
    if (Date.now() > deadline) throw new Error(`the ledger never reached ${rows} rows`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleepUntil = (atMs: number) => new Promise((r) => setTimeout(r, Math.max(0, atMs - Date.now())));

describe('a call redelivered after its principal assertion expired', () => {
  it('is judged as of its acceptance: not "not run", and the effect happened once', async () => {
    child = startExecutorProcess('executor-hang', {
      ...stack.serviceEnv('executor-hang'),
      TOOLGATE_CATALOG_MODULE: fileURLToPath(new URL('./effect-then-hang-catalog.ts', import.meta.url)),
      HANG_TOOL_TIMEOUT_MS: '4000',
      LOG_LEVEL: 'info',
    });
    await child.ready;
    const signedAtMs = Date.now();
    const request = await stack.request(
      { key: 'K-redeliver', seq: 1, ref: 'redeliver' },
      { principalAssertion: await assertion(2, signedAtMs) },
    );
    await stack.publishCalls([request]);
    await untilLedger(stack, 1);
    child.child.kill('SIGKILL');
    await child.exited;

    // The takeover happens once the assertion (2 s) and the verifier's tolerance are long past.
    await sleepUntil(signedAtMs + 2_000 + TOLERANCE_MS + 2_000);
    const lines = await startService(stack, 'executor-taker');
    // The calls topic was created by the services' own topic specs, so its timestamps are trusted.
    expect(lines.filter((l) => l.includes(PRODUCER_TIME_WARNING))).toEqual([]);
    const [result] = await resultsFor(stack, request.callId);
    expect(result!.outcome).not.toBe('UNAUTHORIZED');
    expect(result!.error?.code).not.toBe('INVALID_PRINCIPAL');
    // The first executor died mid-call and the tool has no safe path: outcome unknown, reconciled.
    expect(result!.outcome).toBe('UNRESOLVED');
    const rows = (await ledgerRows(stack.db.pool)).filter((r) => r.callRef === 'redeliver');
    expect(rows).toHaveLength(1);
    const letters = await stack.read('dlq', 1);
    expect(letters.map((l) => l.event.callId)).toContain(request.callId);
  }, 90_000);

  it('still refuses a replay produced after the assertion expired, even backdated', async () => {
    // Runs on the executor the previous test started (same group, same topics).
    const issuedAtMs = Date.now() - 120_000;
    const request = await stack.request(
      { key: 'K-replay', seq: 1, ref: 'replay' },
      { principalAssertion: await assertion(2, issuedAtMs) },
    );
    // The producer claims the call was written while the assertion was valid.
    await produceRaw(stack, request, issuedAtMs + 500);
    const [result] = await resultsFor(stack, request.callId);
    expect(result!.outcome).toBe('UNAUTHORIZED');
    expect(result!.error?.code).toBe('INVALID_PRINCIPAL');
    expect((await ledgerRows(stack.db.pool)).filter((r) => r.callRef === 'replay')).toHaveLength(0);
  }, 60_000);
});

describe('a call that waited in the log past its assertion', () => {
  let own: ExecutorStack;
  beforeAll(async () => {
    own = await createExecutorStack('redeliv_lag');
  });
  afterAll(async () => {
    await Promise.all(services.splice(0).map((s) => s.stop()));
    await own?.close();
  });

  it('runs: it was accepted while the assertion was valid', async () => {
    const signedAtMs = Date.now();
    const request = await own.request(
      { key: 'K-lag', seq: 1, ref: 'lag' },
      { principalAssertion: await assertionFor(own, 2, signedAtMs) },
    );
    await own.publishCalls([request]);
    // No executor yet: the call waits (lag, an outage of the executors) until long after expiry.
    await sleepUntil(signedAtMs + 2_000 + TOLERANCE_MS + 2_000);
    await startService(own, 'executor-lagging');
    const [result] = await resultsFor(own, request.callId);
    expect(result!.outcome).toBe('SUCCESS');
    expect((await ledgerRows(own.db.pool)).filter((r) => r.callRef === 'lag')).toHaveLength(1);
  }, 60_000);
});

describe('an executor on a calls topic that keeps producer timestamps (CreateTime)', () => {
  let own: ExecutorStack;
  beforeAll(async () => {
    own = await createExecutorStack('redeliv_untrusted');
    // A topic created before the executor set LogAppendTime, or by hand with the broker default.
    const admin = await own.kafka.admin();
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: kafkajs.ConfigResourceTypes.TOPIC,
          name: own.topics.calls,
          configEntries: [{ name: 'message.timestamp.type', value: 'CreateTime' }],
        },
      ],
    });
  });
  afterAll(async () => {
    await Promise.all(services.splice(0).map((s) => s.stop()));
    await own?.close();
  });

  it('warns, refuses backdated replays, and never answers "not run" for a call that ran', async () => {
    const lines = await startService(own, 'executor-untrusting');
    expect(lines.filter((l) => l.includes(PRODUCER_TIME_WARNING))).toHaveLength(1);
    const first = await own.request({ key: 'K-ran', seq: 1, ref: 'ran' });
    await own.publishCalls([first]);
    const [ran] = await resultsFor(own, first.callId);
    expect(ran!.outcome).toBe('SUCCESS');

    // The same call again (a redelivery, or a replay of it), its assertion now expired.
    const again: ToolCallRequestedEvent = {
      ...first,
      principalAssertion: await assertionFor(own, 2, Date.now() - 120_000),
    };
    await own.publishCalls([again]);
    const answers = await resultsFor(own, first.callId, 2);
    const second = answers[1]!;
    expect(second.outcome).not.toBe('UNAUTHORIZED');
    expect(second.outcome).toBe('UNRESOLVED');
    expect(second.payloadJson).toBeNull();
    expect((await ledgerRows(own.db.pool)).filter((r) => r.callRef === 'ran')).toHaveLength(1);

    // A call that never ran, with an expired assertion, is refused as before, and leaves no claim.
    const fresh = await own.request(
      { key: 'K-fresh', seq: 1, ref: 'fresh' },
      { principalAssertion: await assertionFor(own, 2, Date.now() - 120_000) },
    );
    await own.publishCalls([fresh]);
    const [refused] = await resultsFor(own, fresh.callId);
    expect(refused!.outcome).toBe('UNAUTHORIZED');
    // A backdated producer timestamp is not believed on this topic.
    const backdated = await own.request(
      { key: 'K-backdated', seq: 1, ref: 'backdated' },
      { principalAssertion: await assertionFor(own, 2, Date.now() - 120_000) },
    );
    await produceRaw(own, backdated, Date.now() - 119_500);
    const [notBelieved] = await resultsFor(own, backdated.callId);
    expect(notBelieved!.outcome).toBe('UNAUTHORIZED');
    expect((await ledgerRows(own.db.pool)).filter((r) => r.callRef === 'backdated')).toHaveLength(0);
    const valid = await own.request(
      { key: 'K-fresh', seq: 1, ref: 'fresh' },
      { callId: `${fresh.callId}-valid`, index: fresh.index },
    );
    expect(valid.idempotencyKey).toBe(fresh.idempotencyKey);
    await own.publishCalls([valid]);
    const [ranNow] = await resultsFor(own, valid.callId);
    expect(ranNow!.outcome).toBe('SUCCESS');
    expect((await ledgerRows(own.db.pool)).filter((r) => r.callRef === 'fresh')).toHaveLength(1);
    // The refusals were for expiry (not, say, an unknown key), as the audit records say.
    const audits = await own.read('audit', 5);
    const verifyReason = (callId: string) =>
      audits
        .filter((a) => a.event.callId === callId)
        .map((a) => a.event.decisions.find((d) => d.stage === 'verify-principal')?.reason);
    expect(verifyReason(fresh.callId)).toEqual(['The principal assertion has expired.']);
    expect(verifyReason(backdated.callId)).toEqual(['The principal assertion has expired.']);
    expect(verifyReason(first.callId)[1]).toMatch(
      /^The principal assertion has expired\. .*may have taken effect/,
    );
  }, 90_000);
});

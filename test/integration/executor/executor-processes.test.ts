import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Consumer } from 'kafkajs';
import { fileURLToPath } from 'node:url';
import { createExecutorStack, type ExecutorStack } from './executor-stack.js';
import { decodeEachMessage } from './test-parts.js';
import { startExecutorProcess, type ExecutorProcess } from './executor-process.js';
import { ledgerRows } from './ledger-tools.js';

const CALLS = 1_000;
const KEYS = 50;
/** The first child is killed once the ledger holds this many effects (mid-run, by construction). */
const KILL_AFTER_EFFECTS = 300;

let stack: ExecutorStack;
const children: ExecutorProcess[] = [];

beforeAll(async () => {
  stack = await createExecutorStack('exec_procs');
});

afterAll(async () => {
  for (const c of children)
    if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  await stack.close();
});

function childEnv(id: string): Record<string, string> {
  return {
    ...stack.serviceEnv(id),
    TOOLGATE_CATALOG_MODULE: fileURLToPath(new URL('./ledger-catalog.ts', import.meta.url)),
    LEDGER_WORK_MS: '5',
    LOG_LEVEL: 'info',
  };
}

function spawnChild(id: string): ExecutorProcess {
  const child = startExecutorProcess(id, childEnv(id));
  children.push(child);
  return child;
}

describe('two executor processes in one group', () => {
  it('survive a SIGKILL mid-run: every call answered, no effect twice, per-key order kept', async () => {
    const t0 = Date.now();
    let a = spawnChild('executor-a');
    const b = spawnChild('executor-b');
    await Promise.all([a.ready, b.ready]);

    // Results as the requester sees them: every delivery, keyed by call id.
    const outcomes = new Map<string, string[]>();
    let delivered = 0;
    let onProgress = (): void => undefined;
    const consumer: Consumer = stack.kafka.consumer({
      groupId: stack.kafka.uniqueGroupId('procs_results'),
      maxWaitTimeInMs: 100,
    });
    const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
    await consumer.connect();
    await consumer.subscribe({ topic: stack.topics.results, fromBeginning: true });
    await consumer.run({
      eachMessage: async (payload) => {
        const { event } = await decodeEachMessage(stack.codec, 'results', payload);
        delivered += 1;
        outcomes.set(event.callId, [...(outcomes.get(event.callId) ?? []), event.outcome]);
        onProgress();
      },
    });
    const until = (predicate: () => boolean, timeoutMs: number, what: string): Promise<void> =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for ${what}: ${outcomes.size}/${CALLS} calls answered`)),
          timeoutMs,
        );
        onProgress = () => {
          if (predicate()) {
            clearTimeout(timer);
            resolve();
          }
        };
        onProgress();
      });

    await joined;

    // 1,000 calls over 50 keys; per key, seq increases in publish order.
    const template = await stack.request({ key: 'k0', seq: 0, ref: 'template' });
    const published: Array<{ callId: string; key: string; seq: number }> = [];
    const batch = [];
    for (let i = 0; i < CALLS; i++) {
      const key = `k${i % KEYS}`;
      const seq = Math.floor(i / KEYS);
      const callId = `${stack.prefix}-c${i}`;
      published.push({ callId, key, seq });
      batch.push(
        await stack.request(
          { key, seq, ref: callId },
          { callId, index: i, principalAssertion: template.principalAssertion, traceId: template.traceId },
        ),
      );
    }
    // Published in the background, so the kill below can land while calls are still arriving.
    const publishing = (async () => {
      for (let i = 0; i < batch.length; i += 100) await stack.publishCalls(batch.slice(i, i + 100));
    })();

    const effects = async (): Promise<number> =>
      Number((await stack.db.pool.query<{ n: string }>('SELECT count(*) AS n FROM ledger')).rows[0]!.n);
    const killDeadline = Date.now() + 60_000;
    while ((await effects()) < KILL_AFTER_EFFECTS) {
      if (Date.now() > killDeadline) throw new Error('the executors made no progress');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    a.child.kill('SIGKILL');
    const answeredAtKill = outcomes.size;
    const killed = await a.exited;
    const effectsAtKill = await effects();
    await publishing;
    const killedPid = a.pid;
    expect(killed.signal).toBe('SIGKILL');
    // Restart it under a new id while the group is still recovering.
    a = spawnChild('executor-a2');
    await a.ready;

    await until(() => outcomes.size >= CALLS, 90_000, 'every call');
    const elapsedMs = Date.now() - t0;
    await consumer.stop();

    // Graceful stop of the survivors: exit code 0.
    b.child.kill('SIGTERM');
    a.child.kill('SIGTERM');
    const [bExit, aExit] = await Promise.all([b.exited, a.exited]);
    expect(bExit.code, b.output.slice(-10).join('\n')).toBe(0);
    expect(aExit.code, a.output.slice(-10).join('\n')).toBe(0);

    const rows = await ledgerRows(stack.db.pool);
    const rowsByCall = new Map<string, number>();
    for (const row of rows) rowsByCall.set(row.callRef, (rowsByCall.get(row.callRef) ?? 0) + 1);
    const doubleEffects = [...rowsByCall.values()].filter((n) => n > 1).length;
    const unresolved = [...outcomes.values()].filter((o) => o.includes('UNRESOLVED')).length;
    const duplicatesDelivered = delivered - outcomes.size;
    console.log(
      `[executor processes] calls=${CALLS} keys=${KEYS} answered=${outcomes.size} resultsDelivered=${delivered} ` +
        `duplicatesDelivered=${duplicatesDelivered} DUPLICATE-outcomes=${[...outcomes.values()].filter((o) => o.includes('DUPLICATE')).length} ` +
        `unresolved=${unresolved} answeredAtKill=${answeredAtKill} effectsAtKill=${effectsAtKill} rowsByKilledPid=${rows.filter((r) => r.pid === killedPid).length} ` +
        `ledgerRows=${rows.length} doubleEffects=${doubleEffects} timeMs=${elapsedMs}`,
    );

    const processOutput = children.flatMap((c) => c.output);
    expect(processOutput.filter((line) => line.includes('MaxListenersExceededWarning'))).toEqual([]);
    expect(processOutput.filter((line) => line.includes('"level":50') && line.includes('defect'))).toEqual(
      [],
    );
    if (process.env.EXECUTOR_TEST_DUMP) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(process.env.EXECUTOR_TEST_DUMP, processOutput.join('\n'));
    }

    // The kill happened mid-run, while the killed process was doing work.
    expect(answeredAtKill).toBeLessThan(CALLS);
    expect(rows.some((r) => r.pid === killedPid)).toBe(true);
    // Every call answered, consistently: an effect that happened is SUCCESS/DUPLICATE, an unknown one UNRESOLVED.
    expect(outcomes.size).toBe(CALLS);
    for (const { callId } of published) {
      const seen = new Set(outcomes.get(callId));
      const ran = rowsByCall.get(callId) ?? 0;
      if (seen.has('UNRESOLVED')) {
        expect([...seen], callId).toEqual(['UNRESOLVED']);
        expect(ran, callId).toBeLessThanOrEqual(1);
      } else {
        expect(
          [...seen].every((o) => o === 'SUCCESS' || o === 'DUPLICATE'),
          `${callId}: ${[...seen].join(',')}`,
        ).toBe(true);
        expect(ran, callId).toBe(1);
      }
    }
    // Every UNRESOLVED call has its dead letter (a reconciliation case), published before its result.
    const unresolvedIds = [...outcomes].filter(([, o]) => o.includes('UNRESOLVED')).map(([id]) => id);
    if (unresolvedIds.length > 0) {
      const dead = await stack.read('dlq', unresolvedIds.length);
      const deadIds = new Set(dead.filter((d) => d.event.reason === 'UNRESOLVED').map((d) => d.event.callId));
      for (const id of unresolvedIds) expect(deadIds.has(id), id).toBe(true);
    }
    // No effect twice.
    expect(doubleEffects).toBe(0);
    // Per key, the effects happened in publish order.
    for (let k = 0; k < KEYS; k++) {
      const key = `k${k}`;
      const order = rows.filter((r) => r.key === key).map((r) => r.seq);
      const expected = published.filter((p) => p.key === key && rowsByCall.has(p.callId)).map((p) => p.seq);
      expect(order, key).toEqual(expected);
    }
  }, 150_000);
});

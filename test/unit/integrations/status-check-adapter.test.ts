import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolgateError } from '../../../libs/core/errors.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import {
  StatusCheckAdapter,
  type StatusCheckedSystem,
} from '../../../libs/integrations/status-check-adapter.js';
import {
  MemorySubmissionLedger,
  type SubmissionLedger,
} from '../../../libs/integrations/submission-ledger.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition, ToolInvocation } from '../../../libs/registry/tool-definition.js';
import { makeDeps, makeState, runTail } from '../guards/stage-harness.js';

interface Req {
  readonly key: string;
  readonly amount: number;
}
interface Rec {
  readonly key: string;
  readonly amount: number;
  readonly id: number;
}

/** A submission the system has received and not yet got to. */
interface Pending {
  readonly req: Req;
  readonly notAfterMs: number;
  answer(rec: Rec): void;
  lose(): void;
}

/**
 * A system without idempotency keys that gets to its work whenever the test says — as a starved
 * machine does: a request can wait in a queue for any time. It honours each submission's deadline:
 * work it gets to after it is abandoned. It really stores what it records.
 */
class StarvedSystem implements StatusCheckedSystem<Req, Rec> {
  readonly records: Rec[] = [];
  readonly queue: Pending[] = [];
  sends = 0;
  abandoned = 0;
  lookupDown = false;
  refuseNext = false;

  constructor(private readonly clock: ManualClock) {}

  async lookup(req: Req): Promise<readonly Rec[]> {
    if (this.lookupDown) throw Object.assign(new Error('status down'), { status: 503 });
    return this.records.filter((r) => r.key === req.key);
  }

  isSameEffect(req: Req, rec: Rec): boolean {
    return rec.amount === req.amount;
  }

  naturalKey(req: Req): string {
    return req.key;
  }

  conflict(): ToolgateError {
    return new ToolgateError('CALLER_ERROR', 'already there with other content', { retryable: false });
  }

  submit(req: Req, notAfterMs: number, signal: AbortSignal): Promise<Rec> {
    this.sends += 1;
    if (this.refuseNext) {
      this.refuseNext = false;
      return Promise.reject(new ToolgateError('CALLER_ERROR', 'period not open'));
    }
    return new Promise<Rec>((resolve, reject) => {
      const lost = (): void => reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
      this.queue.push({ req, notAfterMs, answer: resolve, lose: lost });
    });
  }

  /** Gets to the oldest queued submission now: records it if its deadline allows, then answers or not. */
  process(answer: 'answer' | 'lose'): 'recorded' | 'abandoned' {
    const next = this.queue.shift();
    if (next === undefined) throw new Error('nothing queued');
    if (this.clock.now() > next.notAfterMs) {
      this.abandoned += 1;
      next.lose();
      return 'abandoned';
    }
    const rec = { ...next.req, id: this.records.length + 1 };
    this.records.push(rec);
    if (answer === 'answer') next.answer(rec);
    else next.lose();
    return 'recorded';
  }
}

const TIMING = { lookupTimeoutMs: 500, submitTimeoutMs: 1_000, settleMarginMs: 100 };
const req: Req = { key: 'filer-1|2025Q1', amount: 100 };

function setup(ledger?: SubmissionLedger) {
  const clock = new ManualClock(1_000_000);
  const system = new StarvedSystem(clock);
  const adapter = new StatusCheckAdapter(system, {
    system: 'fake',
    clock,
    ledger: ledger ?? new MemorySubmissionLedger(clock),
    timing: TIMING,
  });
  return { clock, system, adapter };
}

function inv(overrides: Partial<ToolInvocation> = {}): ToolInvocation {
  return {
    ctx: {
      principal: { id: 'u', tenant: 't1', kind: 'agent', scopes: [], roles: [] },
      tenant: 't1',
      taskId: 't',
      step: 0,
      index: 0,
      traceId: '0af7651916cd43dd8448eb211c80319c',
    },
    idempotencyKey: 'k',
    attempt: 1,
    signal: new AbortController().signal,
    assertLive: () => undefined,
    ...overrides,
  };
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

async function failure(p: Promise<unknown>): Promise<ToolgateError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ToolgateError) return err;
    throw err;
  }
  throw new Error('expected a failure');
}

describe('StatusCheckAdapter.apply: one send, with a deadline noted first', () => {
  it('sends once with the earlier of the effect deadline and the submit timeout, noted in the ledger first', async () => {
    const { clock, system, adapter } = setup();
    const sent = adapter.apply(req, inv({ effectDeadlineMs: clock.now() + 300 }));
    await turn();
    expect(system.queue[0]!.notAfterMs).toBe(clock.now() + 300);
    system.process('answer');
    expect(await sent).toMatchObject({ key: req.key, id: 1 });
    const long = adapter.apply({ ...req, key: 'other' }, inv({ effectDeadlineMs: clock.now() + 60_000 }));
    await turn();
    expect(system.queue[0]!.notAfterMs).toBe(clock.now() + TIMING.submitTimeoutMs);
    system.process('answer');
    await long;
    expect(system.sends).toBe(2);
  });

  it('does not send when the deadline cannot be noted first', async () => {
    const ledger: SubmissionLedger = {
      noteSend: () => Promise.reject(new Error('ledger down')),
      sinceLastDeadline: () => Promise.resolve(undefined),
    };
    const { system, adapter } = setup(ledger);
    expect(await failure(adapter.apply(req, inv()))).toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    expect(system.sends).toBe(0);
  });

  it('does not send when the process lost its lease while noting', async () => {
    const { system, adapter } = setup();
    const lost = new ToolgateError('TIMEOUT', 'lease ran out');
    const err = await failure(
      adapter.apply(
        req,
        inv({
          assertLive: () => {
            throw lost;
          },
        }),
      ),
    );
    expect(err).toBe(lost);
    expect(system.sends).toBe(0);
  });

  it('a refusal is rethrown as it is; a lost answer is TIMEOUT (outcome unknown)', async () => {
    const { system, adapter } = setup();
    system.refuseNext = true;
    expect(await failure(adapter.apply(req, inv()))).toMatchObject({ code: 'CALLER_ERROR' });
    const lost = adapter.apply(req, inv());
    await turn();
    system.process('lose');
    expect(await failure(lost)).toMatchObject({ code: 'TIMEOUT' });
  });
});

describe('StatusCheckAdapter.check: "not applied" only when no send can still be recorded', () => {
  it('applied when the same effect is there; a different one refuses; a failing lookup is unknown', async () => {
    const { system, adapter } = setup();
    system.records.push({ ...req, id: 7 });
    expect(await adapter.check(req, inv())).toEqual({ state: 'applied', record: { ...req, id: 7 } });
    expect(await failure(adapter.check({ ...req, amount: 5 }, inv()))).toMatchObject({
      code: 'CALLER_ERROR',
    });
    system.lookupDown = true;
    expect(await adapter.check({ ...req, key: 'x' }, inv())).toEqual({ state: 'unknown' });
  });

  it('nothing ever sent under the key: not applied at once', async () => {
    const { adapter } = setup();
    expect(await adapter.check(req, inv())).toEqual({ state: 'not-applied' });
  });

  it('unknown until the latest deadline under the key, plus the margin, has passed — whoever sent', async () => {
    const { clock, system, adapter } = setup();
    const first = failure(adapter.apply(req, inv({ idempotencyKey: 'call-a' })));
    await turn();
    // Another call for the same natural key (another task) asks while the first is queued.
    expect(await adapter.check(req, inv({ idempotencyKey: 'call-b', attempt: 0 }))).toEqual({
      state: 'unknown',
    });
    await clock.advance(TIMING.submitTimeoutMs + TIMING.settleMarginMs);
    expect(await adapter.check(req, inv())).toEqual({ state: 'unknown' });
    await clock.advance(1);
    expect(await adapter.check(req, inv())).toEqual({ state: 'not-applied' });
    // The system got to the first submission only now: its deadline passed, so it is not recorded.
    expect(system.process('answer')).toBe('abandoned');
    expect(await first).toMatchObject({ code: 'TIMEOUT' });
    expect(system.records).toEqual([]);
  });
});

describe('status-check tool on the adapter, run by the executor against a starved system', () => {
  const args = z.object({ key: z.string(), amount: z.number() });

  function filingTool(adapter: StatusCheckAdapter<Req, Rec>): ToolDefinition {
    return defineTool({
      name: 'file_return',
      version: '1.0.0',
      description: 'File a return.',
      input: args,
      output: z.object({ key: z.string(), amount: z.number(), id: z.number() }),
      scopes: [],
      owner: 'tests',
      timeoutMs: adapter.worstCaseMs() + 100,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
      retrySafety: {
        kind: 'status-check',
        check: async (a, i) => {
          const answer = await adapter.check(a, i);
          return answer.state === 'applied' ? { state: 'applied', result: answer.record } : answer;
        },
        apply: (a, i) => adapter.apply(a, i),
      },
    }) as unknown as ToolDefinition;
  }

  /** Lets the pipeline run until it is waiting on the clock or the system. */
  async function settleTurns(): Promise<void> {
    for (let i = 0; i < 50; i++) await turn();
  }

  it('the first submission reached late is abandoned, so sending again files once', async () => {
    const { clock, system, adapter } = setup();
    const deps = makeDeps({ clock });
    const run = runTail(makeState(filingTool(adapter), { args: { ...req } }), deps);
    await settleTurns();
    expect(system.queue).toHaveLength(1);
    // The system is starved: it does not get to the request before the caller gives up, nor for
    // long after. Time passes; the executor keeps asking and hears "unknown" until the deadline
    // (plus margin) is behind it, then "not applied" — true, because the system will not record it.
    for (let t = 0; t < 40 && system.sends < 2; t++) {
      await clock.advance(100);
      await settleTurns();
    }
    expect(system.sends).toBe(2);
    // Now the system gets to both: the late one is abandoned, the second is recorded and answered.
    expect(system.process('answer')).toBe('abandoned');
    expect(system.process('answer')).toBe('recorded');
    const ran = await run;
    expect(ran.endedAt).toBe('all');
    expect(system.records).toHaveLength(1);
  });

  it('a submission recorded just before its deadline, answer lost: found, never sent again', async () => {
    const { clock, system, adapter } = setup();
    const run = runTail(makeState(filingTool(adapter), { args: { ...req } }), makeDeps({ clock }));
    await settleTurns();
    await clock.advance(TIMING.submitTimeoutMs - 1);
    expect(system.process('lose')).toBe('recorded');
    for (let t = 0; t < 40; t++) {
      await clock.advance(100);
      await settleTurns();
    }
    const ran = await run;
    expect(ran.endedAt).toBe('all');
    expect(ran.state.output).toMatchObject({ id: 1 });
    expect(system.sends).toBe(1);
    expect(system.records).toHaveLength(1);
  });

  it('refuses nonsense timings', () => {
    const clock = new ManualClock(0);
    const make = (timing: typeof TIMING) =>
      new StatusCheckAdapter(new StarvedSystem(clock), {
        system: 'fake',
        clock,
        ledger: new MemorySubmissionLedger(clock),
        timing,
      });
    expect(() => make({ ...TIMING, submitTimeoutMs: 0 })).toThrow(RangeError);
    expect(() => make({ ...TIMING, settleMarginMs: -1 })).toThrow(RangeError);
    expect(make(TIMING).worstCaseMs()).toBe(TIMING.submitTimeoutMs + TIMING.settleMarginMs);
  });
});

import { describe, expect, it } from 'vitest';
import { ToolgateError } from '../../../libs/core/errors.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import {
  StatusCheckAdapter,
  type StatusCheckTiming,
  type StatusCheckedSystem,
} from '../../../libs/integrations/status-check-adapter.js';
import {
  MemorySubmissionLedger,
  type SubmissionLedger,
} from '../../../libs/integrations/submission-ledger.js';

interface Req {
  readonly key: string;
  readonly amount: number;
}
interface Rec {
  readonly key: string;
  readonly amount: number;
  readonly id: number;
}

type Behaviour = 'answer' | 'lose-after-commit' | 'lose-before-commit' | 'refuse' | 'commit-late';

/** A system without idempotency keys, scripted per submission; it really stores what it commits. */
class FakeSystem implements StatusCheckedSystem<Req, Rec> {
  readonly records: Rec[] = [];
  sends = 0;
  lookups = 0;
  lookupDown = false;
  constructor(
    private readonly plan: Behaviour[],
    private readonly lateMs = 0,
  ) {}

  async lookup(req: Req): Promise<readonly Rec[]> {
    this.lookups += 1;
    if (this.lookupDown) throw Object.assign(new Error('status down'), { status: 503 });
    return this.records.filter((r) => r.key === req.key);
  }

  isSameEffect(req: Req, rec: Rec): boolean {
    return rec.amount === req.amount;
  }

  conflict(): ToolgateError {
    return new ToolgateError('CALLER_ERROR', 'already there with other content', { retryable: false });
  }

  async submit(req: Req, signal: AbortSignal): Promise<Rec> {
    const behaviour = this.plan[this.sends] ?? 'answer';
    this.sends += 1;
    const commit = (): Rec => {
      const rec = { ...req, id: this.records.length + 1 };
      this.records.push(rec);
      return rec;
    };
    switch (behaviour) {
      case 'answer':
        return commit();
      case 'refuse':
        throw new ToolgateError('CALLER_ERROR', 'period not open');
      case 'lose-after-commit':
        commit();
        throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      case 'lose-before-commit':
        throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      case 'commit-late':
        // Still working when the caller gives up; commits inside the window, answers nobody.
        setTimeout(commit, this.lateMs);
        return new Promise<Rec>((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
        );
    }
  }
}

const TIMING: StatusCheckTiming = {
  lookupTimeoutMs: 500,
  submitTimeoutMs: 40,
  commitWindowMs: 250,
  settleMarginMs: 20,
  firstPollDelayMs: 10,
  maxPollDelayMs: 40,
  pollBudgetMs: 200,
  resubmits: 1,
};

function adapter(system: FakeSystem, ledger: SubmissionLedger = new MemorySubmissionLedger(systemClock)) {
  return new StatusCheckAdapter(system, { system: 'fake', clock: systemClock, ledger, timing: TIMING });
}

const req: Req = { key: 'filer-1|2025Q1', amount: 100 };
const signal = () => new AbortController().signal;

async function failure(p: Promise<unknown>): Promise<ToolgateError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ToolgateError) return err;
    throw err;
  }
  throw new Error('expected a failure');
}

describe('StatusCheckAdapter.submit', () => {
  it('returns what is already there under the natural key without sending', async () => {
    const system = new FakeSystem([]);
    system.records.push({ ...req, id: 7 });
    expect(await adapter(system).submit(req, 'k', signal())).toEqual({
      record: { ...req, id: 7 },
      path: 'already-applied',
      polls: 0,
    });
    expect(system.sends).toBe(0);
  });

  it('refuses, without sending, when the key holds a different effect', async () => {
    const system = new FakeSystem([]);
    system.records.push({ ...req, amount: 999, id: 1 });
    expect(await failure(adapter(system).submit(req, 'k', signal()))).toMatchObject({ code: 'CALLER_ERROR' });
    expect(system.sends).toBe(0);
  });

  it('sends nothing when it cannot ask first, and says nothing was submitted', async () => {
    const system = new FakeSystem([]);
    system.lookupDown = true;
    const err = await failure(adapter(system).submit(req, 'k', signal()));
    expect(err).toMatchObject({ code: 'SERVER_ERROR', retryable: true });
    expect(err.message).toMatch(/nothing was submitted/);
    expect(system.sends).toBe(0);
  });

  it('an answered submission is sent once', async () => {
    const system = new FakeSystem(['answer']);
    expect(await adapter(system).submit(req, 'k', signal())).toMatchObject({ path: 'submitted', polls: 0 });
    expect(system.sends).toBe(1);
  });

  it('a refusal is the answer: rethrown, not polled, not resent', async () => {
    const system = new FakeSystem(['refuse']);
    expect(await failure(adapter(system).submit(req, 'k', signal()))).toMatchObject({ code: 'CALLER_ERROR' });
    expect(system.sends).toBe(1);
    expect(system.lookups).toBe(1);
  });

  it.each<[string, Behaviour, number, number]>([
    ['an answer lost after the commit is found by polling: one filing', 'lose-after-commit', 0, 1],
    // Commits 120 ms after the send: after the submit timeout and the first polls, well inside the
    // window. It polls before the commit (absent) and keeps polling instead of resending.
    [
      '"not found" inside the commit window is not final: a late commit is found, not resent',
      'commit-late',
      120,
      2,
    ],
  ])('%s', async (_, behaviour, lateMs, minPolls) => {
    const system = new FakeSystem([behaviour], lateMs);
    const out = await adapter(system).submit(req, 'k', signal());
    expect(out.path).toBe('confirmed-by-status-check');
    expect(out.polls).toBeGreaterThanOrEqual(minPolls);
    expect(system.sends).toBe(1);
    expect(system.records).toHaveLength(1);
  });

  it('a send proven absent after the window is resent once', async () => {
    const system = new FakeSystem(['lose-before-commit', 'answer']);
    const out = await adapter(system).submit(req, 'k', signal());
    expect(out.path).toBe('resubmitted');
    expect(system.sends).toBe(2);
    expect(system.records).toHaveLength(1);
  });

  it('two sends proven absent are an honest failure: nothing stored, SERVER_ERROR', async () => {
    const system = new FakeSystem(['lose-before-commit', 'lose-before-commit', 'answer']);
    const err = await failure(adapter(system).submit(req, 'k', signal()));
    expect(err).toMatchObject({ code: 'SERVER_ERROR', retryable: true });
    expect(system.sends).toBe(2);
    expect(system.records).toHaveLength(0);
  });

  it('a lost answer that cannot be checked is TIMEOUT (outcome unknown), never a failure', async () => {
    const system = new FakeSystem(['lose-after-commit']);
    const a = adapter(system);
    const pending = a.submit(req, 'k', signal());
    // The status side goes down right after the pre-check.
    await new Promise((r) => setTimeout(r, 5));
    system.lookupDown = true;
    const err = await failure(pending);
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toMatch(/outcome is unknown/);
    expect(system.sends).toBe(1);
  });

  it('does not send when the send cannot be noted first', async () => {
    const system = new FakeSystem(['answer']);
    const ledger: SubmissionLedger = {
      noteSend: () => Promise.reject(new Error('db down')),
      sinceLastSend: () => Promise.resolve(undefined),
    };
    expect(await failure(adapter(system, ledger).submit(req, 'k', signal()))).toMatchObject({
      code: 'DEPENDENCY_UNAVAILABLE',
    });
    expect(system.sends).toBe(0);
  });
});

describe('StatusCheckAdapter.check', () => {
  it('applied when the effect is there; unknown when the system cannot be asked', async () => {
    const system = new FakeSystem([]);
    system.records.push({ ...req, id: 3 });
    expect(await adapter(system).check(req, 'k', signal())).toEqual({
      state: 'applied',
      record: { ...req, id: 3 },
    });
    system.lookupDown = true;
    expect(await adapter(system).check(req, 'k', signal())).toEqual({ state: 'unknown' });
  });

  it('absent is "unknown" until the window has passed since the last send, then "not-applied"', async () => {
    const clock = new ManualClock(0);
    const ledger = new MemorySubmissionLedger(clock);
    const system = new FakeSystem([]);
    const a = new StatusCheckAdapter(system, { system: 'fake', clock, ledger, timing: TIMING });
    expect(await a.check(req, 'never-sent', signal())).toEqual({ state: 'not-applied' });
    await ledger.noteSend('fake:k');
    await clock.advance(TIMING.commitWindowMs + TIMING.settleMarginMs - 1);
    expect(await a.check(req, 'k', signal())).toEqual({ state: 'unknown' });
    await clock.advance(1);
    expect(await a.check(req, 'k', signal())).toEqual({ state: 'not-applied' });
    // Another system's note under the same call key does not count.
    await ledger.noteSend('other:k2');
    expect(await a.check(req, 'k2', signal())).toEqual({ state: 'not-applied' });
  });

  it('unknown when the ledger cannot be read', async () => {
    const ledger: SubmissionLedger = {
      noteSend: () => Promise.resolve(),
      sinceLastSend: () => Promise.reject(new Error('db down')),
    };
    expect(await adapter(new FakeSystem([]), ledger).check(req, 'k', signal())).toEqual({ state: 'unknown' });
  });
});

describe('StatusCheckAdapter settings', () => {
  it('bounds its worst case and refuses nonsense timings', () => {
    const a = adapter(new FakeSystem([]));
    // pre-check + 2 rounds of (submit + polling until past the window + a last lookup)
    expect(a.worstCaseMs()).toBe(500 + 2 * (40 + (250 + 20 + 40) + 500));
    expect(() => adapter(new FakeSystem([])).worstCaseMs()).not.toThrow();
    expect(
      () =>
        new StatusCheckAdapter(new FakeSystem([]), {
          system: 'fake',
          clock: systemClock,
          ledger: new MemorySubmissionLedger(systemClock),
          timing: { ...TIMING, firstPollDelayMs: 0 },
        }),
    ).toThrow(RangeError);
  });
});

import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KeyedLanes, type LaneSink } from '../../../libs/bus/keyed-lanes.js';
import { LaneTracker } from '../../../libs/bus/lane-tracker.js';
import { silentBusLogger } from '../../../libs/bus/logger.js';
import type { BusMessage, MessageContext, TopicPartition } from '../../../libs/ports/event-bus.js';

/*
 * KeyedLanes driven through random sequences of deliveries (overlapping and re-fetched ranges, with
 * gaps), handler completions in any order, rebalances (hold, assignments that keep or lose
 * partitions, with and without committing the lost ones), a flipping start gate, and a final stop or
 * crash, against a reference model of what every step may and must do. Timers are fake (handler
 * delays, slow commits, the commit interval), so each case is deterministic and shrinks.
 */

const TOPIC = 'calls';
const PARTITIONS = 3;
const LOG_LENGTH = 12;
const KEYS = ['a', 'b', 'c'];

/** How a handler behaves, drawn in turn for each message it starts. */
type Behavior = 'manual' | 'untilAbort' | 'resolved' | 'delayed' | 'throws' | 'rejects';
/** How a sink answers a commit, drawn in turn for each commit. */
type CommitMode = 'ok' | 'slow' | 'fails';
/** How the test settles a handler it holds: finished, failed (counts as finished), or given up. */
type Outcome = 'done' | 'throw' | 'giveUp';

type Op =
  | {
      readonly t: 'deliver';
      readonly p: number;
      readonly from: number;
      readonly count: number;
      readonly skip: number;
    }
  | { readonly t: 'refetch'; readonly p: number; readonly count: number }
  | { readonly t: 'finish'; readonly pick: number; readonly outcome: Outcome }
  | { readonly t: 'tick'; readonly ms: number }
  | { readonly t: 'hold' }
  | { readonly t: 'assign'; readonly keep: readonly boolean[]; readonly commitRevoked: boolean }
  | { readonly t: 'bounce'; readonly p: number; readonly commitRevoked: boolean; readonly count: number }
  | { readonly t: 'mayStart'; readonly value: boolean; readonly wake: boolean }
  | { readonly t: 'wake' };

interface Scenario {
  readonly logs: readonly (readonly string[])[];
  readonly maxConcurrency: number;
  readonly maxBuffered: number;
  readonly commitIntervalMs: number;
  readonly behaviors: readonly Behavior[];
  readonly delays: readonly number[];
  readonly commitModes: readonly CommitMode[];
  readonly ops: readonly Op[];
  /** Whether the end runs everything to completion (and checks liveness) before stopping. */
  readonly drainFirst: boolean;
  readonly end: 'stop' | 'abandon';
}

/** The model of one generation of a partition's lane: from its first delivery to its revocation. */
class ModelGeneration {
  /** Every commit position the sink received, in order. */
  readonly commits: number[] = [];
  /** The last commit the sink accepted. */
  lastAccepted: number | undefined;
  /** Commits sent and not answered yet. */
  inFlight = 0;
  paused = false;
  /** Offsets the lane took (not ignored as already held), with their keys, in offset order. */
  readonly accepted = new Map<number, string>();
  first: number | undefined;
  highest: number | undefined;
  readonly started = new Set<number>();
  /** Handler settled (whatever the result). */
  readonly returned = new Set<number>();
  /** Handler resolved true or threw: the offset may be committed past. */
  readonly finished = new Set<number>();
  running = 0;
  revoked = false;
  dropCommits = false;
  signal: AbortSignal | undefined;
  sink!: LaneSink;

  constructor(
    readonly p: number,
    readonly id: number,
  ) {}

  unfinishedCount(): number {
    let count = 0;
    for (const offset of this.accepted.keys()) if (!this.finished.has(offset)) count += 1;
    return count;
  }

  lowestUnfinished(): number | undefined {
    for (const offset of this.accepted.keys()) if (!this.finished.has(offset)) return offset;
    return undefined;
  }

  /** What the lane's committed position must be once everything settled. */
  position(): number {
    return this.lowestUnfinished() ?? this.highest! + 1;
  }

  describe(): string {
    return `p${this.p}/gen${this.id}`;
  }
}

/** A handler the test settles itself (or that gives up when its signal aborts). */
interface Held {
  readonly gen: ModelGeneration;
  readonly offset: number;
  readonly signal: AbortSignal;
  settle(outcome: Outcome): void;
}

const tp = (p: number): TopicPartition => ({ topic: TOPIC, partition: p });

function message(p: number, offset: number, key: string): BusMessage {
  const value = Buffer.from('x');
  return { topic: TOPIC, partition: p, offset: String(offset), key, value, headers: {}, timestampMs: 0 };
}

/** Lets every settled promise chain run; fake timers do not move. */
const flush = async (): Promise<void> => {
  for (let i = 0; i < 2; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
};

/**
 * Runs one scenario against KeyedLanes and the model, recording every violation of:
 * - key order: a message starts only after every earlier message of its key in its generation
 *   returned, and never while its key runs in any generation of the partition (at each start);
 * - the concurrency bound, the hold, mayStart, and stop(): nothing starts past them (at each start);
 * - commit safety: every commit is at most the lowest delivered unfinished offset of its
 *   generation and never below the one before; none after a revocation without commits or a crash
 *   (at each commit); each generation that closes with commits ends at its position, answered;
 * - no double run: a generation runs each offset it took at most once (at each start);
 * - revocation: signals abort exactly with it; assign() and stop() resolve only once what they
 *   revoked has returned (and committed); paused lanes resume when revoked or below half the bound;
 * - liveness: after every step, a free slot with nothing held means nothing could start; at the end
 *   every message of a live generation ran and its last position was committed.
 */
class Harness {
  readonly violations: string[] = [];
  readonly trace: string[] = [];
  readonly lanes: KeyedLanes;
  private readonly gens: ModelGeneration[][] = Array.from({ length: PARTITIONS }, () => []);
  private readonly current: (ModelGeneration | undefined)[] = Array.from(
    { length: PARTITIONS },
    () => undefined,
  );
  private assigned = new Set<number>(Array.from({ length: PARTITIONS }, (_, p) => p));
  /** The group's committed offset per partition (last successful commit of any generation). */
  private readonly committed: (number | undefined)[] = Array.from({ length: PARTITIONS }, () => undefined);
  private readonly runningKeys = new Map<string, number>();
  private readonly held: Held[] = [];
  private readonly assigns: { resolved: boolean; label: string }[] = [];
  private running = 0;
  private holding = false;
  private mayStart = true;
  /** mayStart turned true and nothing has pumped since: the lanes may not have noticed yet. */
  private stale = false;
  private stopCalled = false;
  /** The rebalance is over: every commit succeeds. */
  private brokerSettled = false;
  private starts = 0;
  private commitCount = 0;
  private nextGenId = 0;

  constructor(private readonly s: Scenario) {
    this.lanes = new KeyedLanes((m, c) => this.handle(m, c), {
      maxConcurrency: s.maxConcurrency,
      maxBuffered: s.maxBuffered,
      commitIntervalMs: s.commitIntervalMs,
      groupId: 'g',
      logger: silentBusLogger,
      heartbeat: () => Promise.resolve(),
      mayStart: () => this.mayStart,
    });
  }

  private fail(message: string): void {
    this.violations.push(message);
  }

  private newGeneration(p: number): ModelGeneration {
    const gen = new ModelGeneration(p, this.nextGenId++);
    gen.sink = {
      commit: (position) => this.commit(gen, Number(position)),
      throttle: (paused) => {
        if (paused === gen.paused) this.fail(`${gen.describe()}: throttle(${paused}) repeated`);
        if (paused && gen.revoked) this.fail(`${gen.describe()}: paused after its revocation`);
        gen.paused = paused;
      },
    };
    this.gens[p]!.push(gen);
    this.current[p] = gen;
    return gen;
  }

  private commit(gen: ModelGeneration, position: number): Promise<void> {
    const name = gen.describe();
    if (gen.dropCommits) this.fail(`${name}: commit ${position} after revocation without commits`);
    const last = gen.commits.at(-1);
    if (last !== undefined && position < last) this.fail(`${name}: commit ${position} after ${last}`);
    if (position < gen.first!) this.fail(`${name}: commit ${position} below the first offset ${gen.first}`);
    const bound = gen.position();
    if (position > bound) this.fail(`${name}: commit ${position} passes unfinished/undelivered ${bound}`);
    gen.commits.push(position);
    this.trace.push(`  commit ${name} ${position}`);
    const drawn = this.s.commitModes[this.commitCount++ % this.s.commitModes.length]!;
    const mode = this.brokerSettled ? 'ok' : drawn;
    const record = () => {
      this.committed[gen.p] = position;
      gen.lastAccepted = position;
    };
    if (mode === 'ok') {
      record();
      return Promise.resolve();
    }
    if (mode === 'slow') {
      gen.inFlight += 1;
      return new Promise((resolve) =>
        setTimeout(() => {
          gen.inFlight -= 1;
          resolve(record());
        }, 1),
      );
    }
    return Promise.reject(new Error('the group is rebalancing'));
  }

  /** The model generation a started message belongs to, told by its signal. */
  private generationOf(p: number, signal: AbortSignal): ModelGeneration | undefined {
    const known = this.gens[p]!.find((g) => g.signal === signal);
    if (known !== undefined) return known;
    const gen = this.current[p];
    if (gen !== undefined && gen.signal === undefined) {
      gen.signal = signal;
      return gen;
    }
    return undefined;
  }

  private handle(m: BusMessage, context: MessageContext): Promise<boolean> {
    const p = m.partition;
    const offset = Number(m.offset);
    const key = m.key;
    const gen = this.generationOf(p, context.signal);
    this.trace.push(`  start p${p}@${offset} ${key} ${gen?.describe() ?? '?'}`);
    const what = `start of p${p}@${offset}`;
    if (gen === undefined) {
      this.fail(`${what}: under a signal of no live generation`);
      return Promise.resolve(true);
    }
    if (this.stopCalled) this.fail(`${what}: after stop()`);
    if (this.holding) this.fail(`${what}: while held`);
    if (!this.mayStart) this.fail(`${what}: while mayStart() is false`);
    if (gen.revoked || context.signal.aborted) this.fail(`${what}: in revoked ${gen.describe()}`);
    if (gen.accepted.get(offset) !== key) this.fail(`${what}: not delivered to ${gen.describe()}`);
    if (gen.started.has(offset)) this.fail(`${what}: runs twice in ${gen.describe()}`);
    for (const [earlier, k] of gen.accepted) {
      if (earlier >= offset) break;
      if (k === key && !gen.returned.has(earlier)) {
        this.fail(`${what}: before p${p}@${earlier} of key ${key} returned`);
      }
    }
    const laneKey = `${p}/${key}`;
    if ((this.runningKeys.get(laneKey) ?? 0) > 0) this.fail(`${what}: key ${key} already running`);
    if (this.running >= this.s.maxConcurrency)
      this.fail(`${what}: more than ${this.s.maxConcurrency} running`);

    const overlapping = this.gens[p]!.filter((g) => g !== gen && g.running > 0);
    if (overlapping.length > 0)
      this.trace.push(`  (while ${overlapping.map((g) => g.describe()).join(', ')} runs)`);
    gen.started.add(offset);
    gen.running += 1;
    this.running += 1;
    this.runningKeys.set(laneKey, (this.runningKeys.get(laneKey) ?? 0) + 1);
    let settled = false;
    const markReturned = (outcome: Outcome): void => {
      if (settled) throw new Error('settled twice');
      settled = true;
      gen.returned.add(offset);
      if (outcome !== 'giveUp') gen.finished.add(offset);
      gen.running -= 1;
      this.running -= 1;
      this.runningKeys.set(laneKey, this.runningKeys.get(laneKey)! - 1);
      this.trace.push(`  return p${p}@${offset} ${outcome}`);
    };

    const behavior = this.s.behaviors[this.starts % this.s.behaviors.length]!;
    const delay = this.s.delays[this.starts % this.s.delays.length]!;
    this.starts += 1;
    switch (behavior) {
      case 'resolved':
        markReturned('done');
        return Promise.resolve(true);
      case 'throws':
        markReturned('throw');
        throw new Error('handler bug');
      case 'rejects':
        markReturned('throw');
        return Promise.reject(new Error('handler failed'));
      case 'delayed':
        return new Promise((resolve) =>
          setTimeout(() => {
            markReturned('done');
            resolve(true);
          }, delay),
        );
      case 'manual':
      case 'untilAbort':
        return new Promise((resolve, reject) => {
          const held: Held = {
            gen,
            offset,
            signal: context.signal,
            settle: (outcome) => {
              const index = this.held.indexOf(held);
              if (index < 0) return;
              this.held.splice(index, 1);
              markReturned(outcome);
              if (outcome === 'throw') reject(new Error('handler failed'));
              else resolve(outcome === 'done');
            },
          };
          this.held.push(held);
          if (behavior === 'untilAbort') {
            context.signal.addEventListener('abort', () => held.settle('giveUp'), { once: true });
          }
        });
    }
  }

  private deliver(p: number, offsets: readonly number[]): void {
    if (this.stopCalled || !this.assigned.has(p) || offsets.length === 0) return;
    const gen = this.current[p] ?? this.newGeneration(p);
    for (const offset of offsets) {
      if (gen.highest !== undefined && offset <= gen.highest) continue;
      gen.accepted.set(offset, this.s.logs[p]![offset]!);
      gen.highest = offset;
      gen.first ??= offset;
    }
    this.stale = false;
    const messages = offsets.map((o) => message(p, o, this.s.logs[p]![o]!));
    this.lanes.deliver(tp(p), messages, gen.sink);
  }

  private assign(next: ReadonlySet<number>, commitRevoked: boolean): void {
    const waited: ModelGeneration[] = [];
    for (let p = 0; p < PARTITIONS; p += 1) {
      if (next.has(p)) continue;
      // Revoked generations of the partition still running are waited for, and so is its current one.
      waited.push(...this.gens[p]!.filter((g) => g.revoked && g.running > 0));
      const gen = this.current[p];
      if (gen !== undefined) {
        gen.revoked = true;
        gen.dropCommits = !commitRevoked;
        this.current[p] = undefined;
        waited.push(gen);
      }
    }
    this.assigned = new Set(next);
    this.holding = false;
    this.stale = false;
    const entry = { resolved: false, label: `assign [${[...next].join(',')}] ${commitRevoked}` };
    this.assigns.push(entry);
    void this.lanes
      .assign(
        [...next].map((p) => tp(p)),
        commitRevoked,
      )
      .then(() => {
        entry.resolved = true;
        for (const gen of waited) {
          if (gen.running > 0) this.fail(`${entry.label} resolved while ${gen.describe()} runs`);
          if (!gen.dropCommits) this.checkFinalCommit(gen, entry.label);
        }
      });
  }

  /** After a rebalance Kafka fetches a partition again from the group's committed offset. */
  private refetch(p: number, count: number): void {
    const from = this.committed[p] ?? 0;
    const offsets: number[] = [];
    for (let o = from; o < from + count && o < LOG_LENGTH; o += 1) offsets.push(o);
    this.deliver(p, offsets);
  }

  /** Once a generation closed with commits on, its last commit is its final position, and answered. */
  private checkFinalCommit(gen: ModelGeneration, when: string): void {
    if (gen.inFlight > 0) this.fail(`${gen.describe()} after ${when}: a commit is still being sent`);
    const position = gen.position();
    const last = gen.commits.at(-1);
    const ok = last === undefined ? position === gen.first : last === position;
    if (!ok) this.fail(`${gen.describe()} after ${when}: last commit ${last}, position ${position}`);
  }

  async step(op: Op): Promise<void> {
    this.trace.push(JSON.stringify(op));
    switch (op.t) {
      case 'deliver': {
        const offsets: number[] = [];
        for (let i = 0; i < op.count && op.from + i < LOG_LENGTH; i += 1) {
          if ((op.skip & (1 << i)) === 0) offsets.push(op.from + i);
        }
        this.deliver(op.p, offsets.length > 0 ? offsets : [op.from]);
        break;
      }
      case 'refetch':
        this.refetch(op.p, op.count);
        break;
      case 'finish': {
        if (this.held.length === 0) break;
        const held = this.held[op.pick % this.held.length]!;
        held.settle(op.outcome === 'giveUp' && !held.signal.aborted ? 'done' : op.outcome);
        break;
      }
      case 'tick':
        await vi.advanceTimersByTimeAsync(op.ms);
        break;
      case 'hold':
        this.holding = true;
        this.lanes.hold();
        break;
      case 'assign': {
        const next = new Set<number>();
        op.keep.forEach((keep, p) => keep && next.add(p));
        this.assign(next, op.commitRevoked);
        break;
      }
      case 'bounce': {
        // The partition moves away and comes back at once; Kafka re-fetches it from the committed
        // offset while the previous generation may still run.
        const all = new Set(Array.from({ length: PARTITIONS }, (_, p) => p));
        const without = new Set(all);
        without.delete(op.p);
        this.assign(without, op.commitRevoked);
        this.assign(all, op.commitRevoked);
        this.refetch(op.p, op.count);
        break;
      }
      case 'mayStart':
        if (op.value && !this.mayStart) this.stale = !op.wake;
        this.mayStart = op.value;
        if (op.wake) {
          this.stale = false;
          this.lanes.wake();
        }
        break;
      case 'wake':
        this.stale = false;
        this.lanes.wake();
        break;
    }
    await flush();
    this.checkStep();
  }

  /** Messages of live generations that nothing keeps from starting. */
  private readyMessages(): string[] {
    const ready: string[] = [];
    for (const gen of this.current) {
      if (gen === undefined) continue;
      const blocked = new Set<string>();
      for (const [offset, key] of gen.accepted) {
        if (gen.started.has(offset)) {
          if (!gen.returned.has(offset)) blocked.add(key);
          continue;
        }
        if (!blocked.has(key) && (this.runningKeys.get(`${gen.p}/${key}`) ?? 0) === 0) {
          ready.push(`p${gen.p}@${offset}`);
        }
        blocked.add(key);
      }
    }
    return ready;
  }

  private checkStep(): void {
    for (const gens of this.gens) {
      for (const gen of gens) {
        if (gen.revoked && gen.paused) this.fail(`${gen.describe()}: revoked but paused`);
        // Running messages' signals abort with the revocation, and not before (a hold is no reason).
        const aborted = gen.signal?.aborted ?? gen.revoked;
        if (aborted !== gen.revoked)
          this.fail(`${gen.describe()}: signal aborted ${aborted}, revoked ${gen.revoked}`);
      }
    }
    // Backpressure: paused at maxBuffered unfinished, fetching again below half of it.
    for (const gen of this.current) {
      if (gen === undefined) continue;
      const unfinished = gen.unfinishedCount();
      if (unfinished >= this.s.maxBuffered && !gen.paused)
        this.fail(`${gen.describe()}: ${unfinished} unfinished, not paused`);
      if (unfinished < this.s.maxBuffered / 2 && gen.paused)
        this.fail(`${gen.describe()}: ${unfinished} unfinished, paused`);
    }
    const free = this.running < this.s.maxConcurrency;
    if (free && !this.holding && this.mayStart && !this.stale && !this.stopCalled) {
      const ready = this.readyMessages();
      if (ready.length > 0) this.fail(`idle slot while ${ready.join(', ')} could start`);
    }
    if (this.lanes.runningCount() !== this.running) {
      this.fail(`runningCount() ${this.lanes.runningCount()}, model ${this.running}`);
    }
    this.assertClean();
  }

  assertClean(): void {
    if (this.violations.length > 0) {
      throw new Error(`${this.violations.join('\n')}\n--- trace ---\n${this.trace.join('\n')}`);
    }
  }

  /** Settles every held handler (as its signal allows) and lets timers run until `until` holds. */
  private async settleAll(until: () => boolean): Promise<boolean> {
    for (let round = 0; round < 100; round += 1) {
      if (until()) return true;
      for (const held of [...this.held]) held.settle(held.signal.aborted ? 'giveUp' : 'done');
      await vi.advanceTimersByTimeAsync(5);
      await flush();
    }
    return until();
  }

  async end(): Promise<void> {
    if (this.s.drainFirst) {
      this.trace.push('drain');
      // The rebalance completes (commits go through again) and the member keeps what it has.
      this.brokerSettled = true;
      this.assign(this.assigned, false);
      this.mayStart = true;
      this.stale = false;
      this.lanes.wake();
      await flush();
      await this.settleAll(() => this.running === 0 && this.readyMessages().length === 0);
      await vi.advanceTimersByTimeAsync(this.s.commitIntervalMs + 5);
      await flush();
      this.checkStep();
      for (const gen of this.current) {
        if (gen === undefined) continue;
        for (const offset of gen.accepted.keys()) {
          if (!gen.finished.has(offset)) this.fail(`liveness: p${gen.p}@${offset} never finished`);
        }
        this.checkFinalCommit(gen, 'draining');
        // A commit refused while the group rebalanced is sent again once it is over.
        const position = gen.position();
        if (position !== gen.first && gen.lastAccepted !== position) {
          this.fail(`${gen.describe()}: committed ${gen.lastAccepted} after draining, position ${position}`);
        }
      }
      this.assertClean();
    }
    this.trace.push(this.s.end);
    const live = this.current.filter((g): g is ModelGeneration => g !== undefined);
    for (const gen of live) {
      gen.revoked = true;
      this.current[gen.p] = undefined;
    }
    this.stopCalled = true;
    if (this.s.end === 'stop') {
      let stopped = false;
      void this.lanes.stop().then(() => {
        stopped = true;
        if (this.running > 0) this.fail(`stop() resolved while ${this.running} handlers run`);
        for (const gens of this.gens)
          for (const gen of gens) if (!gen.dropCommits) this.checkFinalCommit(gen, 'stop');
      });
      if (!(await this.settleAll(() => stopped))) this.fail('stop() never resolved');
    } else {
      // A crashed member commits nothing more, whatever its lanes were doing.
      for (const gens of this.gens) for (const gen of gens) gen.dropCommits = true;
      this.lanes.abandon();
      await this.settleAll(() => this.running === 0);
    }
    // Stopped lanes ignore deliveries.
    const late = this.newGeneration(0);
    late.revoked = true;
    this.lanes.deliver(tp(0), [message(0, 0, 'a')], late.sink);
    await vi.advanceTimersByTimeAsync(this.s.commitIntervalMs + 5);
    await flush();
    for (const entry of this.assigns) if (!entry.resolved) this.fail(`${entry.label} never resolved`);
    if (this.lanes.runningCount() !== 0)
      this.fail(`runningCount() ${this.lanes.runningCount()} after the end`);
    this.assertClean();
  }
}

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('deliver' as const),
      p: fc.nat(PARTITIONS - 1),
      from: fc.nat(LOG_LENGTH - 1),
      count: fc.integer({ min: 1, max: 5 }),
      skip: fc.oneof(fc.constant(0), fc.nat(31)),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('refetch' as const),
      p: fc.nat(PARTITIONS - 1),
      count: fc.integer({ min: 1, max: 6 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('finish' as const),
      pick: fc.nat(7),
      outcome: fc.constantFrom<Outcome>('done', 'done', 'throw', 'giveUp'),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ t: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 4 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ t: 'hold' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('assign' as const),
      // Often a rebalance that gives every partition back: lanes then overlap their revoked selves.
      keep: fc.oneof(
        fc.constant(Array.from({ length: PARTITIONS }, () => true)),
        fc.array(fc.boolean(), { minLength: PARTITIONS, maxLength: PARTITIONS }),
      ),
      commitRevoked: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('bounce' as const),
      p: fc.nat(PARTITIONS - 1),
      commitRevoked: fc.boolean(),
      count: fc.integer({ min: 1, max: 6 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('mayStart' as const), value: fc.boolean(), wake: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.constant({ t: 'wake' as const }) },
);

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  logs: fc.array(fc.array(fc.constantFrom(...KEYS), { minLength: LOG_LENGTH, maxLength: LOG_LENGTH }), {
    minLength: PARTITIONS,
    maxLength: PARTITIONS,
  }),
  maxConcurrency: fc.integer({ min: 1, max: 4 }),
  maxBuffered: fc.integer({ min: 1, max: 6 }),
  commitIntervalMs: fc.integer({ min: 0, max: 3 }),
  behaviors: fc.array(
    fc.constantFrom<Behavior>('manual', 'untilAbort', 'resolved', 'delayed', 'throws', 'rejects'),
    {
      minLength: 1,
      maxLength: 6,
    },
  ),
  delays: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 4 }),
  commitModes: fc.array(fc.constantFrom<CommitMode>('ok', 'ok', 'slow', 'fails'), {
    minLength: 1,
    maxLength: 4,
  }),
  ops: fc.array(opArb, { minLength: 5, maxLength: 60, size: 'max' }),
  drainFirst: fc.boolean(),
  end: fc.constantFrom<'stop' | 'abandon'>('stop', 'stop', 'abandon'),
});

async function runScenario(scenario: Scenario): Promise<void> {
  const harness = new Harness(scenario);
  try {
    for (const op of scenario.ops) await harness.step(op);
    await harness.end();
  } finally {
    vi.clearAllTimers();
  }
}

describe('KeyedLanes (properties against a reference model)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  // 5,000 scenarios take about 4 s of CPU, which a 2-core host at a load average of 20 stretches to a minute.
  it('keeps key order, concurrency, commit safety, revocation and stop contracts, and runs everything it may', async () => {
    await fc.assert(fc.asyncProperty(scenarioArb, runScenario), { numRuns: 5000 });
  }, 180_000);

  describe('cases the properties found', () => {
    /** Lanes over a handler the test finishes, and a sink whose commits the test may hold. */
    function fixture() {
      const commits: string[] = [];
      const finishers = new Map<string, (finished: boolean) => void>();
      let holdCommits = false;
      const heldCommits: (() => void)[] = [];
      const lanes = new KeyedLanes(
        (m) => new Promise<boolean>((resolve) => finishers.set(m.offset, resolve)),
        {
          maxConcurrency: 4,
          maxBuffered: 10,
          commitIntervalMs: 0,
          groupId: 'g',
          logger: silentBusLogger,
          heartbeat: () => Promise.resolve(),
        },
      );
      const sink: LaneSink = {
        commit: (position) => {
          commits.push(position);
          if (!holdCommits) return Promise.resolve();
          return new Promise<void>((resolve) => heldCommits.push(resolve));
        },
        throttle: () => undefined,
      };
      const deliver = (...keys: string[]) =>
        lanes.deliver(
          tp(0),
          keys.map((key, offset) => message(0, offset, key)),
          sink,
        );
      const settle = async () => {
        await vi.advanceTimersByTimeAsync(1);
        await flush();
      };
      const finish = async (offset: number) => {
        finishers.get(String(offset))!(true);
        await settle();
      };
      return {
        lanes,
        commits,
        deliver,
        settle,
        finish,
        holdCommits: () => (holdCommits = true),
        releaseCommits: () => {
          for (const release of heldCommits.splice(0)) release();
        },
      };
    }

    it('commits nothing after abandon(), also for a lane revoked earlier that was still running', async () => {
      const f = fixture();
      f.deliver('a');
      await f.settle();
      // Revoked with its commits on: the lane drains its running message, then would commit.
      void f.lanes.assign([], true);
      // The member crashes while it drains.
      f.lanes.abandon();
      await f.finish(0);
      expect(f.commits).toEqual([]);
    });

    it('commits nothing after abandon(), also for a revoked lane whose last commit waits for an earlier one', async () => {
      const f = fixture();
      f.deliver('a', 'b');
      await f.settle();
      f.holdCommits();
      await f.finish(0); // commit 1 goes out and is not answered yet
      await f.finish(1);
      void f.lanes.assign([], true); // nothing runs: the last commit (2) queues behind commit 1
      f.lanes.abandon();
      f.releaseCommits();
      await f.settle();
      expect(f.commits).toEqual(['1']);
    });

    it('stop() waits for the last commit of a lane revoked earlier that is still being sent', async () => {
      const f = fixture();
      f.deliver('a', 'b');
      await f.settle();
      f.holdCommits();
      await f.finish(0);
      await f.finish(1);
      void f.lanes.assign([], true);
      let stopped = false;
      void f.lanes.stop().then(() => (stopped = true));
      await f.settle();
      expect(stopped).toBe(false); // commit 2 has not been sent yet
      f.releaseCommits();
      await f.settle();
      f.releaseCommits();
      await f.settle();
      expect(f.commits).toEqual(['1', '2']);
      expect(stopped).toBe(true);
    });
  });
});

/**
 * A growing stream for LaneTracker: offsets with gaps, each finishing some time after it arrived
 * (or never), long enough that the tracker drops its finished prefix.
 */
const streamArb = fc
  .array(
    fc.record({
      gap: fc.integer({ min: 1, max: 3 }),
      delay: fc.integer({ min: 0, max: 60 }),
      // Rarely never: one message that never finishes holds the position (and the window) back.
      finishes: fc.oneof(
        { weight: 4999, arbitrary: fc.constant(true) },
        { weight: 1, arbitrary: fc.constant(false) },
      ),
    }),
    { minLength: 1, maxLength: 3000, size: 'max' },
  )
  .map((entries) => {
    let offset = 0;
    const events: { at: number; kind: 'append' | 'finish'; offset: number }[] = [];
    entries.forEach((entry, i) => {
      offset += entry.gap;
      events.push({ at: i, kind: 'append', offset });
      if (entry.finishes) events.push({ at: i + entry.delay + 0.5, kind: 'finish', offset });
    });
    return events.sort((a, b) => a.at - b.at);
  });

describe('LaneTracker (property against a reference model)', () => {
  it('keeps the position at the lowest unfinished offset of a long stream, through its compaction', () => {
    fc.assert(
      fc.property(streamArb, (events) => {
        const tracker = new LaneTracker();
        const appended: number[] = [];
        const finished = new Set<number>();
        let lowest = 0; // index into appended of the lowest unfinished entry
        for (const event of events) {
          if (event.kind === 'append') {
            tracker.append(String(event.offset));
            appended.push(event.offset);
          } else {
            const moved = tracker.markDone(String(event.offset));
            if (moved !== (appended[lowest] === event.offset))
              expect.fail(`markDone(${event.offset}): ${moved}`);
            finished.add(event.offset);
            // A second mark of a finished offset is either a no-op or, once it left the window, foreign.
            if (appended[lowest] !== event.offset && tracker.markDone(String(event.offset))) {
              expect.fail(`a second mark of ${event.offset} moved the position`);
            }
          }
          while (lowest < appended.length && finished.has(appended[lowest]!)) lowest += 1;
          const expected = lowest < appended.length ? appended[lowest]! : appended.at(-1)! + 1;
          const prefix = lowest > 0 ? String(appended[lowest - 1]) : undefined;
          // Plain comparisons: this runs for every event of every stream.
          if (
            tracker.position() !== String(expected) ||
            tracker.unfinishedCount() !== appended.length - finished.size ||
            tracker.lastFinishedInPrefix() !== prefix
          ) {
            expect({
              position: tracker.position(),
              unfinished: tracker.unfinishedCount(),
              prefix: tracker.lastFinishedInPrefix(),
            }).toEqual({ position: String(expected), unfinished: appended.length - finished.size, prefix });
          }
        }
        expect(tracker.highest()).toBe(BigInt(appended.at(-1)!));
        expect(() => tracker.markDone(String(appended.at(-1)! + 1))).toThrow(RangeError);
        expect(() => tracker.append(String(appended.at(-1)!))).toThrow(RangeError);
      }),
      { numRuns: 60 },
    );
  });
});

import type { ToolCallResult } from '../../libs/core/types.js';
import type { ToolCallResultEvent } from '../../libs/events/contracts.js';
import { resultFromEvent } from './call-results.js';

/** A published call, as the inbox remembers it. */
export interface PublishedCall {
  /** toolgate's call id: globally unique, what results are matched on. */
  readonly callId: string;
  /** The provider's id for the call: what the model waits on. */
  readonly providerCallId: string;
  readonly tool: string;
  readonly tenant: string;
  readonly taskId: string;
  readonly idempotencyKey: string;
}

/** A definite outcome that arrived for a call whose turn had already ended UNRESOLVED. */
export interface ToolCallResolution {
  readonly call: PublishedCall;
  /** `callId` is the provider's call id, as in the turn's results. */
  readonly result: ToolCallResult;
  /** Who settled it: usually the reconciler; an executor when its late result is the first answer. */
  readonly source: ToolCallResultEvent['source'];
}

/** What the inbox did with one result event. */
export type Delivery =
  /** The first result for an awaited call. */
  | 'accepted'
  /** A definite result replaced an UNRESOLVED one of an awaited call. */
  | 'superseded'
  /** A later result for a call that already had one; dropped (the first wins). */
  | 'duplicate'
  /** A definite result for a call no longer awaited whose turn ended UNRESOLVED: passed on. */
  | 'resolution'
  /** Not a call this client is waiting for or remembers as unresolved; dropped. */
  | 'unmatched';

/** One turn's wait, from {@link ResultInbox.expect}. */
export interface TurnWait {
  /** Resolves once every call of the turn has a result (an UNRESOLVED one counts). */
  readonly complete: Promise<void>;
  /**
   * Stops waiting for calls that turned out never to be published (refused before the broker took
   * them): `complete` no longer waits for them, and `close` neither returns nor remembers them.
   * Ids not awaited by this turn are ignored.
   */
  withdraw(callIds: readonly string[]): void;
  /**
   * Stops waiting and returns each call's result event, if any. Calls without one, or with an
   * UNRESOLVED one, are remembered as unresolved, so a later definite result becomes a
   * {@link ToolCallResolution}. Idempotent.
   */
  close(): ReadonlyMap<string, ToolCallResultEvent>;
}

interface Waiting {
  readonly call: PublishedCall;
  event: ToolCallResultEvent | undefined;
  withdrawn?: true;
  readonly turn: { missing: number; done: () => void };
}

export interface ResultInboxOptions {
  /** Called for each {@link ToolCallResolution}; exceptions are the caller's to catch. */
  readonly onResolution: (resolution: ToolCallResolution) => void;
  /** Most unresolved calls remembered after their turn ended; the oldest are forgotten first. */
  readonly maxUnresolved: number;
  /** Called when an unresolved call is forgotten to make room (its resolution will be dropped). */
  readonly onForget?: (call: PublishedCall) => void;
}

/**
 * Matches results to awaited calls by toolgate call id. Results arrive at least once (a redelivered
 * call can be answered twice), so the inbox dedupes: the first result of a call wins, except that an
 * UNRESOLVED result is superseded by a later definite one (from the reconciler, an operator, or an
 * executor whose takeover found the outcome) — an effect known to have happened must not stay
 * reported as unknown. Calls this client never published (another instance's results on a shared
 * reply partition, or calls from before a restart that nobody awaits) are dropped.
 *
 * Memory: awaited calls live for their turn; unresolved calls after it, up to `maxUnresolved`.
 * Synchronous and single-threaded: deliveries and turn changes never interleave.
 */
export class ResultInbox {
  private readonly awaited = new Map<string, Waiting>();
  private readonly unresolved = new Map<string, PublishedCall>();

  constructor(private readonly options: ResultInboxOptions) {}

  /** Starts waiting for `calls` (register before publishing: a result may come back at once). */
  expect(calls: readonly PublishedCall[]): TurnWait {
    let done!: () => void;
    const complete = new Promise<void>((resolve) => (done = resolve));
    const turn = { missing: calls.length, done };
    const mine: Waiting[] = calls.map((call) => ({ call, event: undefined, turn }));
    const ids = new Set(calls.map((c) => c.callId));
    if (ids.size !== calls.length || calls.some((c) => this.awaited.has(c.callId))) {
      throw new Error('a call id is awaited twice');
    }
    for (const waiting of mine) this.awaited.set(waiting.call.callId, waiting);
    if (calls.length === 0) done();
    let snapshot: ReadonlyMap<string, ToolCallResultEvent> | undefined;
    return {
      complete,
      withdraw: (callIds) => {
        for (const callId of callIds) {
          const waiting = mine.find((w) => w.call.callId === callId);
          if (waiting === undefined || waiting.withdrawn || snapshot !== undefined) continue;
          waiting.withdrawn = true;
          this.awaited.delete(callId);
          if (waiting.event === undefined) {
            turn.missing -= 1;
            if (turn.missing === 0) done();
          }
        }
      },
      close: () => {
        if (snapshot !== undefined) return snapshot;
        const events = new Map<string, ToolCallResultEvent>();
        for (const waiting of mine) {
          if (waiting.withdrawn) continue;
          this.awaited.delete(waiting.call.callId);
          if (waiting.event !== undefined) events.set(waiting.call.callId, waiting.event);
          if (waiting.event === undefined || waiting.event.outcome === 'UNRESOLVED')
            this.remember(waiting.call);
        }
        snapshot = events;
        return events;
      },
    };
  }

  /** Routes one result event; see {@link Delivery}. */
  deliver(event: ToolCallResultEvent): Delivery {
    const waiting = this.awaited.get(event.callId);
    if (waiting !== undefined) {
      if (waiting.event === undefined) {
        waiting.event = event;
        waiting.turn.missing -= 1;
        if (waiting.turn.missing === 0) waiting.turn.done();
        return 'accepted';
      }
      if (waiting.event.outcome === 'UNRESOLVED' && event.outcome !== 'UNRESOLVED') {
        waiting.event = event;
        return 'superseded';
      }
      return 'duplicate';
    }
    const call = this.unresolved.get(event.callId);
    if (call === undefined) return 'unmatched';
    // A repeated "unknown" is no news; keep waiting for a definite answer.
    if (event.outcome === 'UNRESOLVED') return 'duplicate';
    this.unresolved.delete(event.callId);
    this.options.onResolution({
      call,
      result: resultFromEvent(event, call.providerCallId),
      source: event.source,
    });
    return 'resolution';
  }

  /** Calls currently awaited by running turns. */
  awaitedCount(): number {
    return this.awaited.size;
  }

  /** Calls remembered as unresolved after their turn ended. */
  unresolvedCount(): number {
    return this.unresolved.size;
  }

  private remember(call: PublishedCall): void {
    this.unresolved.set(call.callId, call);
    while (this.unresolved.size > this.options.maxUnresolved) {
      const oldest = this.unresolved.keys().next().value;
      if (oldest === undefined) break;
      const forgotten = this.unresolved.get(oldest)!;
      this.unresolved.delete(oldest);
      this.options.onForget?.(forgotten);
    }
  }
}

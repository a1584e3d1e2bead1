import type { Cluster, Redis } from 'ioredis';
import type {
  ClaimResult,
  IdempotencyStore,
  PeekResult,
  StoredResult,
} from '../../ports/idempotency-store.js';
import { checkDurationMs, checkKey } from '../memory/argument-checks.js';
import {
  abandonedRetentionMs,
  checkClaim,
  checkComplete,
  type IdempotencyStoreOptions,
} from '../memory/idempotency-options.js';
import { retryWithBackoff, type Backoff } from '../../core/backoff.js';
import { ToolgateError } from '../../core/errors.js';
import { systemClock } from '../../core/system-clock.js';
import { luaScript } from './lua-script.js';

/** How a {@link RedisIdempotencyStore} names its keys and how long it keeps abandoned markers. */
export interface RedisIdempotencyStoreOptions extends IdempotencyStoreOptions {
  /** Prepended to every key this store writes (e.g. `toolgate:`); records live at `<prefix>idem:<key>`. */
  readonly keyPrefix: string;
  /**
   * Wait after each write until this many replicas of the key's master have it (Redis WAIT), at
   * most `timeoutMs`. Redis replicates asynchronously: without it, a claim acknowledged by a master
   * that dies before its replica received it is lost with it, and a redelivery of that call after
   * the failover claims afresh and runs the tool again. A claim the replicas do not acknowledge in
   * time is given back and throws DEPENDENCY_UNAVAILABLE (the call is refused, not run).
   *
   * A completion or settle records an answer whose effect already happened, so giving up on it
   * loses what a redelivery needs (the promoted replica would hold only the claim, and the
   * redelivery would report the call UNRESOLVED). Such a write that is not acknowledged is written
   * again where the key lives now (after a failover: the promoted replica) and waited for again,
   * for up to `rewriteForMs` (default 10 s); then it returns false (its caller's rule for a write
   * that may not have happened). A release that is not acknowledged returns false at once. Default:
   * no waiting.
   */
  readonly replicaAcks?: {
    readonly replicas: number;
    readonly timeoutMs: number;
    readonly rewriteForMs?: number;
  };
}

/** How long an unacknowledged completion is written again by default (see `replicaAcks`). */
const DEFAULT_REWRITE_FOR_MS = 10_000;
/** The waits between rewrites of an unacknowledged completion: 100 ms doubling to 1 s. */
const REWRITE_BACKOFF: Backoff = { baseDelayMs: 100, maxDelayMs: 1_000 };

/**
 * Idempotency records in Redis, one hash per key, shared by every executor using this Redis.
 *
 * claim, complete, release and settle are each one Lua script (lua/idempotency-*.lua), so each is atomic;
 * peek is one read-only script (HMGET and TIME: it writes nothing and moves no expiry).
 * Time is the Redis server's TIME, read inside the claim script, not an executor's clock: leases
 * written by different executors are compared on one clock, and `leaseExpiresAtMs` values are Redis
 * server time. Completed records expire through the key's TTL (`ttlMs`); an abandoned in-flight
 * marker expires `abandonedRetentionMs` after its lease.
 *
 * Ownership rules are those of MemoryIdempotencyStore (the contract suite holds all adapters to them).
 * Results round-trip through JSON. Throws when Redis is unreachable (callers fail closed). Works with
 * a Cluster too: every script touches exactly one key.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly claimScript = luaScript('idempotency-claim.lua');
  private readonly completeScript = luaScript('idempotency-complete.lua');
  private readonly releaseScript = luaScript('idempotency-release.lua');
  private readonly settleScript = luaScript('idempotency-settle.lua');
  private readonly peekScript = luaScript('idempotency-peek.lua');
  private readonly keyPrefix: string;
  private readonly abandonedRetentionMs: number;
  private readonly replicaAcks: RedisIdempotencyStoreOptions['replicaAcks'];

  constructor(
    private readonly redis: Redis | Cluster,
    options: RedisIdempotencyStoreOptions,
  ) {
    this.keyPrefix = options.keyPrefix;
    this.abandonedRetentionMs = abandonedRetentionMs(options);
    this.replicaAcks = options.replicaAcks;
  }

  async claim(key: string, fingerprint: string, owner: string, leaseMs: number): Promise<ClaimResult> {
    const lease = checkClaim(key, fingerprint, owner, leaseMs);
    const reply = await this.claimScript.run(
      this.redis,
      [this.recordKey(key)],
      [fingerprint, owner, lease, this.abandonedRetentionMs],
    );
    const claim = parseClaimReply(reply);
    if ((claim.kind === 'claimed' || claim.kind === 'taken-over') && !(await this.replicated(key))) {
      // The call will not run: the key is given back so its redelivery is a first run, not a
      // take-over of a call that might have run.
      await this.releaseScript.run(this.redis, [this.recordKey(key)], [owner]).catch(() => undefined);
      throw new ToolgateError(
        'DEPENDENCY_UNAVAILABLE',
        `the idempotency claim was not acknowledged by ${this.replicaAcks!.replicas} Redis replica(s) within ${this.replicaAcks!.timeoutMs} ms`,
      );
    }
    return claim;
  }

  async complete(key: string, owner: string, stored: StoredResult, ttlMs: number): Promise<boolean> {
    const ttl = checkComplete(key, owner, ttlMs);
    const write = async (): Promise<boolean> =>
      (await this.completeScript.run(
        this.redis,
        [this.recordKey(key)],
        [owner, JSON.stringify(stored), ttl],
      )) === 1;
    if (!(await write())) return false;
    return this.replicatedOrRewritten(key, stored, write);
  }

  async release(key: string, owner: string): Promise<boolean> {
    checkKey('key', key);
    checkKey('owner', owner);
    const reply = await this.releaseScript.run(this.redis, [this.recordKey(key)], [owner]);
    return reply === 1 && (await this.replicated(key));
  }

  async settle(key: string, stored: StoredResult, ttlMs: number): Promise<boolean> {
    checkKey('key', key);
    const ttl = checkDurationMs('ttlMs', ttlMs);
    const write = async (): Promise<boolean> =>
      (await this.settleScript.run(this.redis, [this.recordKey(key)], [JSON.stringify(stored), ttl])) === 1;
    if (!(await write())) return false;
    return this.replicatedOrRewritten(key, stored, write);
  }

  async peek(key: string): Promise<PeekResult> {
    checkKey('key', key);
    return parsePeekReply(await this.peekScript.run(this.redis, [this.recordKey(key)], []));
  }

  /**
   * After `write` (a completion or settle of `stored`) succeeded: true once `replicaAcks` replicas
   * have the record. While they do not, the write is made again where the key lives now and waited
   * for again, until `replicaAcks.rewriteForMs` has passed; false then, or as soon as the key holds
   * something else (another owner's record, nothing). A failing Redis in between (a failover in
   * progress) counts as "not yet". Never rejects.
   */
  private async replicatedOrRewritten(
    key: string,
    stored: StoredResult,
    write: () => Promise<boolean>,
  ): Promise<boolean> {
    if (this.replicaAcks === undefined) return true;
    const deadline = Date.now() + (this.replicaAcks.rewriteForMs ?? DEFAULT_REWRITE_FOR_MS);
    return retryWithBackoff(
      async (attempt) => {
        if (attempt > 1 && !(await this.rewritten(key, stored, write))) return false;
        if (await this.replicated(key).catch(() => false)) return true;
        throw new Error('not acknowledged by enough replicas yet');
      },
      { backoff: REWRITE_BACKOFF, clock: systemClock, isFatal: () => Date.now() >= deadline },
    ).catch(() => false);
  }

  /**
   * Writes `stored` again: true when the record has it (the write put it back — a master died
   * before its replica had it — or it was still there, only unacknowledged) or when Redis cannot be
   * reached (a failover in progress: not yet known); false when the key has moved on.
   */
  private async rewritten(
    key: string,
    stored: StoredResult,
    write: () => Promise<boolean>,
  ): Promise<boolean> {
    try {
      return (await write()) || (await this.holds(key, stored));
    } catch {
      return true;
    }
  }

  /** Whether the key's record is completed with exactly `stored`. */
  private async holds(key: string, stored: StoredResult): Promise<boolean> {
    const now = await this.peek(key);
    return now.kind === 'completed' && JSON.stringify(now.stored) === JSON.stringify(stored);
  }

  /**
   * True when no replica acknowledgement is asked for, or when `replicaAcks.replicas` replicas of the
   * record's master acknowledged every earlier write of this connection within the timeout. On a
   * Cluster, WAIT goes in one pipeline with a read of the record's key, so it runs on that key's
   * master.
   */
  private async replicated(key: string): Promise<boolean> {
    if (this.replicaAcks === undefined) return true;
    const { replicas, timeoutMs } = this.replicaAcks;
    const redis = this.redis;
    let acknowledged: unknown;
    if ('isCluster' in redis && redis.isCluster) {
      const replies = await redis.pipeline().exists(this.recordKey(key)).wait(replicas, timeoutMs).exec();
      const [error, value] = replies?.[1] ?? [new Error('no reply to WAIT'), undefined];
      if (error !== null) throw error;
      acknowledged = value;
    } else {
      acknowledged = await redis.wait(replicas, timeoutMs);
    }
    return typeof acknowledged === 'number' && acknowledged >= replicas;
  }

  /** The Redis key of one record; exposed for operational tooling and tests that inspect TTLs. */
  recordKey(key: string): string {
    return `${this.keyPrefix}idem:${key}`;
  }
}

function parsePeekReply(reply: unknown): PeekResult {
  if (Array.isArray(reply)) {
    const [kind, fingerprint, a, b, c] = reply as unknown[];
    if (kind === 'absent') return { kind };
    if (kind === 'completed' && typeof fingerprint === 'string' && typeof a === 'string') {
      return { kind, fingerprint, stored: JSON.parse(a) as StoredResult };
    }
    if (
      kind === 'in-flight' &&
      typeof fingerprint === 'string' &&
      typeof a === 'string' &&
      typeof b === 'number' &&
      (c === 0 || c === 1)
    ) {
      return { kind, fingerprint, owner: a, leaseExpiresAtMs: b, leaseExpired: c === 1 };
    }
  }
  throw new Error(`unexpected reply from idempotency-peek.lua: ${JSON.stringify(reply)}`);
}

function parseClaimReply(reply: unknown): ClaimResult {
  if (Array.isArray(reply)) {
    const [kind, a, b] = reply as unknown[];
    switch (kind) {
      case 'claimed':
        if (typeof a === 'number') return { kind, leaseExpiresAtMs: a };
        break;
      case 'taken-over':
        if (typeof a === 'string' && typeof b === 'number') {
          return { kind, previousOwner: a, leaseExpiresAtMs: b };
        }
        break;
      case 'in-flight':
        if (typeof a === 'string' && typeof b === 'number') return { kind, owner: a, leaseExpiresAtMs: b };
        break;
      case 'completed':
        if (typeof a === 'string') return { kind, stored: JSON.parse(a) as StoredResult };
        break;
      case 'conflict':
        if (typeof a === 'string') return { kind, storedFingerprint: a };
        break;
    }
  }
  throw new Error(`unexpected reply from idempotency-claim.lua: ${JSON.stringify(reply)}`);
}

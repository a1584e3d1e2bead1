import type { Cluster, Redis } from 'ioredis';
import type { Approval, ConsumeResult, SingleUseStore } from '../../ports/single-use-store.js';
import { checkDurationMs, checkKey } from '../memory/argument-checks.js';
import { luaScript } from './lua-script.js';

/** How a {@link RedisSingleUseStore} names its keys. */
export interface RedisSingleUseStoreOptions {
  /**
   * Prepended to every key (e.g. `toolgate:`): used ids live at `<prefix>single-use:<id>`, approvals
   * at `<prefix>single-use-approval:<id>`.
   */
  readonly keyPrefix: string;
}

/**
 * Single-use ids in Redis, shared by every executor using this Redis. consume and approve are each
 * one Lua script (lua/single-use-consume.lua, lua/single-use-approve.lua): a `SET NX PX` plus, for a
 * retry, a holder comparison, in one atomic step. Entries expire through their key's TTL.
 * Approval times are the Redis server's clock. Works with a Cluster: every script touches one key.
 * Throws when Redis is unreachable. See {@link SingleUseStore} for the contract.
 */
export class RedisSingleUseStore implements SingleUseStore {
  private readonly consumeScript = luaScript('single-use-consume.lua');
  private readonly approveScript = luaScript('single-use-approve.lua');
  private readonly keyPrefix: string;

  constructor(
    private readonly redis: Redis | Cluster,
    options: RedisSingleUseStoreOptions,
  ) {
    this.keyPrefix = options.keyPrefix;
  }

  async consume(id: string, ttlMs: number, holder = ''): Promise<ConsumeResult> {
    checkKey('id', id);
    const ttl = checkDurationMs('ttlMs', ttlMs);
    const reply = await this.consumeScript.run(this.redis, [this.usedKey(id)], [holder, ttl]);
    return reply === 1 ? 'consumed' : 'already-used';
  }

  async approve(id: string, approver: string, ttlMs: number): Promise<Approval> {
    checkKey('id', id);
    checkKey('approver', approver);
    const ttl = checkDurationMs('ttlMs', ttlMs);
    const reply = await this.approveScript.run(this.redis, [this.approvalKey(id)], [approver, ttl]);
    const approval = parseApproval(reply);
    // The script always leaves an approval in place; an empty answer means a corrupt key.
    if (approval === undefined) throw new Error(`single-use approval of ${id} could not be read back`);
    return approval;
  }

  async approval(id: string): Promise<Approval | undefined> {
    checkKey('id', id);
    return parseApproval(await this.redis.hmget(this.approvalKey(id), 'approver', 'at'));
  }

  private usedKey(id: string): string {
    return `${this.keyPrefix}single-use:${id}`;
  }

  private approvalKey(id: string): string {
    return `${this.keyPrefix}single-use-approval:${id}`;
  }
}

function parseApproval(reply: unknown): Approval | undefined {
  if (!Array.isArray(reply)) return undefined;
  const [approver, at] = reply as unknown[];
  if (typeof approver !== 'string' || typeof at !== 'string') return undefined;
  const approvedAtMs = Number(at);
  return Number.isFinite(approvedAtMs) ? { approver, approvedAtMs } : undefined;
}

import { describe, expect, it } from 'vitest';
import {
  MemoryMcpTaskStore,
  RedisMcpTaskStore,
  type McpTask,
  type McpTaskStore,
} from '../../services/mcp-gateway/task-store.js';
import { uniqueName } from '../helpers/names.js';
import { openForSuite } from '../helpers/stack-lifecycle.js';
import { expectMayHavePassed, timed, untilForgotten, withGrowingPeriod } from './store-time.js';
import { memoryHarness, redisClusterHarness, redisHarness, type Harness } from './store-harnesses.js';

const adapters: { name: string; create(): Promise<Harness<McpTaskStore>> }[] = [
  {
    name: 'memory',
    create: () => Promise.resolve(memoryHarness((clock) => new MemoryMcpTaskStore(() => clock.now()))),
  },
  {
    name: 'redis',
    create: () => redisHarness((redis, keyPrefix) => new RedisMcpTaskStore(redis, { keyPrefix }), 'task'),
  },
  {
    name: 'redis-cluster',
    create: () =>
      redisClusterHarness((redis, keyPrefix) => new RedisMcpTaskStore(redis, { keyPrefix }), 'task'),
  },
];

const T0 = 1_700_000_000_000;

const task = (overrides: Partial<McpTask> = {}): McpTask => ({
  status: 'working',
  taskId: uniqueName('call'),
  tenant: 'acme',
  principalId: 'user-ada',
  tool: 'slow_compute',
  createdAtMs: T0,
  updatedAtMs: T0,
  ttlMs: 60_000,
  ...overrides,
});

const RESULT = { content: [{ type: 'text', text: '{"status":"working"}' }] };

describe.each(adapters)('McpTaskStore contract: $name', (adapter) => {
  let h: Harness<McpTaskStore>;
  let store: McpTaskStore;
  openForSuite(async () => {
    h = await adapter.create();
    store = h.subject;
    return h;
  });

  it('stores a task once: a second create of the same id writes nothing', async () => {
    const first = task();
    expect(await store.create(first)).toBe(true);
    expect(await store.create({ ...first, tool: 'other' })).toBe(false);
    expect(await h.peer.get(first.taskId)).toEqual(first);
    expect(await store.get(uniqueName('never'))).toBeUndefined();
  });

  it('moves a working task once to a terminal state, which never changes again', async () => {
    const t = task();
    await store.create(t);
    expect(await store.change(t.taskId, { status: 'working', statusMessage: 'late', atMs: T0 + 1 })).toBe(
      true,
    );
    expect(await store.get(t.taskId)).toMatchObject({
      status: 'working',
      statusMessage: 'late',
      updatedAtMs: T0 + 1,
    });
    expect(await store.change(t.taskId, { status: 'completed', result: RESULT, atMs: T0 + 2 })).toBe(true);
    expect(
      await h.peer.change(t.taskId, {
        status: 'failed',
        error: { code: -32603, message: 'x' },
        atMs: T0 + 3,
      }),
    ).toBe(false);
    expect(await store.change(t.taskId, { status: 'working', cancelRequested: true, atMs: T0 + 4 })).toBe(
      false,
    );
    const stored = await store.get(t.taskId);
    expect(stored).toEqual({ ...t, status: 'completed', result: RESULT, updatedAtMs: T0 + 2 });
    expect(await store.change(uniqueName('never'), { status: 'completed', result: RESULT, atMs: T0 })).toBe(
      false,
    );
  });

  it('of concurrent terminal moves from two clients, exactly one wins, tried 30 times', async () => {
    for (let round = 0; round < 30; round++) {
      const t = task();
      await store.create(t);
      const moves = await Promise.all([
        store.change(t.taskId, { status: 'completed', result: RESULT, atMs: T0 + 1 }),
        h.peer.change(t.taskId, { status: 'failed', error: { code: -32603, message: 'boom' }, atMs: T0 + 2 }),
        store.change(t.taskId, { status: 'completed', result: { content: [] }, atMs: T0 + 3 }),
      ]);
      expect(moves.filter(Boolean)).toHaveLength(1);
      const winner = moves.indexOf(true);
      expect((await store.get(t.taskId))?.status).toBe(winner === 1 ? 'failed' : 'completed');
    }
  });

  it('forgets a task after its ttl, and a change keeps the ttl it had', async () => {
    await withGrowingPeriod(300, async (ttlMs) => {
      const t = task({ ttlMs });
      const created = await timed(h, () => store.create(t));
      expect(created.value).toBe(true);
      await h.pass(ttlMs / 2);
      const atMs = T0 + ttlMs / 2;
      const changed = await timed(h, () =>
        store.change(t.taskId, { status: 'completed', result: RESULT, atMs }),
      );
      if (!changed.value) {
        // Refused only because the task had lapsed already: this ttl was too short for this machine.
        expectMayHavePassed(ttlMs, created, changed);
        expect(await store.get(t.taskId)).toBeUndefined();
        return false;
      }
      const { gone } = await untilForgotten(h, ttlMs, created, async () => {
        const stored = await store.get(t.taskId);
        if (stored !== undefined) expect(stored).toMatchObject({ status: 'completed', updatedAtMs: atMs });
        return stored !== undefined;
      });
      // Expired: the id is free again.
      expect(await store.create(t)).toBe(true);
      // Gone before a ttl counted from the change could have run out: the change did not restart it.
      return gone.endMs < changed.startMs + ttlMs;
    });
  });
});

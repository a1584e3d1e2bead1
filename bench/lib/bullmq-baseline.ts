/**
 * The queue baseline: BullMQ no-op jobs on the same Redis. Jobs are added in bulk first, then one
 * Worker (concurrency as given) processes them; completed and failed jobs are removed as they
 * finish, the usual high-throughput setting. The queue is obliterated afterwards.
 */
import { Queue, Worker } from 'bullmq';
import { nowMs, within } from './report.js';

export interface BullmqRunOptions {
  readonly redisUrl: string;
  readonly queueName: string;
  readonly jobs: number;
  readonly concurrency: number;
  readonly timeoutMs: number;
}

/** Adds `jobs` no-op jobs, runs them, and returns jobs/s from the first job started to the last completed. */
export async function runBullmq(o: BullmqRunOptions): Promise<number> {
  const url = new URL(o.redisUrl);
  const connection = {
    host: url.hostname,
    port: Number(url.port || 6379),
    maxRetriesPerRequest: null,
  };
  const prefix = 'bench-bull';
  const queue = new Queue(o.queueName, { connection, prefix });
  try {
    for (let i = 0; i < o.jobs; i += 1000) {
      const count = Math.min(1000, o.jobs - i);
      await queue.addBulk(
        Array.from({ length: count }, (_, k) => ({
          name: 'noop',
          data: { n: i + k },
          opts: { removeOnComplete: true, removeOnFail: true },
        })),
      );
    }
    let first = Number.NaN;
    let last = Number.NaN;
    let completed = 0;
    let failed = 0;
    let finish: () => void = () => undefined;
    const allDone = new Promise<void>((resolve) => (finish = resolve));
    const worker = new Worker(
      o.queueName,
      (job) => {
        if (Number.isNaN(first)) first = nowMs();
        return Promise.resolve({ n: (job.data as { n: number }).n });
      },
      { connection, prefix, concurrency: o.concurrency, autorun: false },
    );
    const count = (): void => {
      last = nowMs();
      if (completed + failed >= o.jobs) finish();
    };
    worker.on('completed', () => {
      completed += 1;
      count();
    });
    worker.on('failed', () => {
      failed += 1;
      count();
    });
    void worker.run();
    try {
      await within(allDone, o.timeoutMs, () => `BullMQ completed ${completed} of ${o.jobs} jobs`);
    } finally {
      await worker.close();
    }
    if (failed > 0) throw new Error(`${failed} BullMQ no-op jobs failed`);
    return o.jobs / ((last - first) / 1000);
  } finally {
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  }
}

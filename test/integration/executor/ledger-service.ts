import type { ToolCallResultEvent } from '../../../libs/events/contracts.js';
import { createLogger } from '../../../libs/observability/logger.js';
import { createPolicyEngine } from '../../../libs/policy/index.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import type { CatalogFactory } from '../../../libs/catalog/catalog.js';
import { loadExecutorConfig } from '../../../services/executor/config.js';
import { createExecutorService } from '../../../services/executor/service.js';
import type { Service } from '../../../libs/runtime/service.js';
import type { ExecutorStack } from './executor-stack.js';
import { LEDGER_DDL, ledgerTools } from './ledger-tools.js';
import { decodeEachMessage } from './test-parts.js';

/** A running executor service on a stack, with its log lines and its /metrics address. */
export interface LedgerService {
  readonly service: Service;
  readonly lines: string[];
  readonly metricsUrl: string;
}

/**
 * The executor service in-process on `stack` (its environment, plus `env`) with the ledger tools;
 * its log lines are collected. The caller stops it.
 */
export async function startLedgerService(
  stack: ExecutorStack,
  id: string,
  env: Record<string, string> = {},
): Promise<LedgerService> {
  const catalog: CatalogFactory = async (env) => {
    const pool = await env.postgres();
    await pool.query(LEDGER_DDL);
    const registry = new ToolRegistry();
    for (const tool of ledgerTools(pool)) registry.register(tool);
    return {
      registry,
      policy: createPolicyEngine({ version: 'ledger-service-test' }, []),
      downstreamLimits: {},
    };
  };
  const lines: string[] = [];
  const logger = createLogger({
    level: 'info',
    name: 'executor',
    destination: { write: (line: string) => void lines.push(line) },
  });
  const service = createExecutorService(loadExecutorConfig({ ...stack.serviceEnv(id), ...env }), {
    logger,
    catalog,
  });
  const { healthPort } = await service.start();
  return { service, lines, metricsUrl: `http://127.0.0.1:${healthPort}/metrics` };
}

/**
 * The results published for `callId` (read from the beginning by a fresh group), once at least
 * `count` arrived; rejects after `timeoutMs` naming how many did.
 */
export async function resultsFor(
  stack: ExecutorStack,
  callId: string,
  count = 1,
  timeoutMs = 40_000,
): Promise<ToolCallResultEvent[]> {
  const consumer = stack.kafka.consumer({
    groupId: stack.kafka.uniqueGroupId('results_for'),
    maxWaitTimeInMs: 100,
  });
  const found: ToolCallResultEvent[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic: stack.topics.results, fromBeginning: true });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`got ${found.length} of ${count} results for ${callId}`)),
        timeoutMs,
      );
      void consumer.run({
        eachMessage: async (payload) => {
          const { event } = await decodeEachMessage(stack.codec, 'results', payload);
          if (event.callId !== callId) return;
          found.push(event);
          if (found.length >= count) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.stop();
  }
  return found;
}

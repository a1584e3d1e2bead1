import type { AuditStore } from '../../libs/ports/audit-store.js';
import type { StoreDownstreams } from '../downstreams/store-downstreams.js';
import type { ToolgateClient } from '../sdk/index.js';
import type { DemoConfig } from './config.js';

/** What the story needs from a running toolgate, whichever transport it runs on. */
export interface DemoToolgate {
  /** 'embedded' (memory bus, one process) or 'kafka' (Kafka, schema registry, Redis, Postgres). */
  readonly mode: 'embedded' | 'kafka';
  readonly client: ToolgateClient;
  readonly downstreams: StoreDownstreams;
  readonly auditStore: AuditStore;
  /**
   * In kafka mode: the run's name (its topic prefix, Redis key prefix and Postgres schema, see
   * config.ts DEMO_RUN_ID) and the servers it created them on.
   */
  readonly kafkaRun?: { readonly runId: string; readonly servers: DemoConfig['servers'] };
  awaitAudited(callIds: readonly string[], timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

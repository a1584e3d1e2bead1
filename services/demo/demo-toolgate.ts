import type { AuditStore } from '../../libs/ports/audit-store.js';
import type { StoreDownstreams } from '../downstreams/store-downstreams.js';
import type { ToolgateClient } from '../sdk/index.js';

/** What the story needs from a running toolgate, whichever transport it runs on. */
export interface DemoToolgate {
  /** 'embedded' (memory bus, one process) or 'kafka' (Kafka, schema registry, Redis, Postgres). */
  readonly mode: 'embedded' | 'kafka';
  readonly client: ToolgateClient;
  readonly downstreams: StoreDownstreams;
  readonly auditStore: AuditStore;
  awaitAudited(callIds: readonly string[], timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

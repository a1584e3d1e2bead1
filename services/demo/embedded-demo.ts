import { createEmbeddedStore } from './embedded-store.js';
import type { TopologyLogger } from '../embedded/topology-logger.js';
import type { DemoToolgate } from './demo-toolgate.js';

/** The story's toolgate in embedded mode: everything in this process, nothing on a port. */
export async function startEmbeddedDemo(logger?: TopologyLogger): Promise<DemoToolgate> {
  const tg = createEmbeddedStore(logger === undefined ? {} : { logger });
  await tg.start();
  return {
    mode: 'embedded',
    client: tg.client,
    downstreams: tg.downstreams,
    auditStore: tg.auditStore,
    awaitAudited: (ids, timeoutMs) => tg.awaitAudited(ids, timeoutMs),
    stop: () => tg.stop(),
  };
}

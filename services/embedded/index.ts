/**
 * `toolgate/embedded`: toolgate in one process (memory bus and stores) running the tools you give
 * it, and the transport-neutral topology it is built from.
 */
export {
  createEmbeddedToolgate,
  type EmbeddedRunOptions,
  type EmbeddedToolgate,
  type EmbeddedToolgateOptions,
} from './create-embedded-toolgate.js';
export { createTopology, type Topology, type TopologyParts, type TopicPartitions } from './topology.js';
export { quietLogger, warningsTo, type TopologyLogger } from './topology-logger.js';

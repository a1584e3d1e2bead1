/** toolgate in one process (memory bus and stores), and the transport-neutral topology it is built from. */
export {
  createEmbeddedToolgate,
  type EmbeddedToolgate,
  type EmbeddedToolgateOptions,
} from './create-embedded-toolgate.js';
export {
  createTopology,
  type Topology,
  type TopologyCatalog,
  type TopologyParts,
  type TopicPartitions,
} from './topology.js';
export { quietLogger, warningsTo, type TopologyLogger } from './topology-logger.js';

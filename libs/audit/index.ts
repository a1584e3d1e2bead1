/**
 * Audit-log logic every audit store shares: stored form, hash chain, verification, query matching,
 * whoDid labelling. The stores themselves live in libs/adapters/{memory,postgres}.
 */
export { toStorableJson, storableText, REPLACEMENT_CHARACTER } from './storable-json.js';
export { prepareEnvelope, MAX_ID_LENGTH } from './envelope.js';
export {
  chainOf,
  resourceIdOf,
  indexedColumns,
  differingColumns,
  attemptLabel,
  type IndexedColumns,
} from './columns.js';
export {
  GENESIS_HASH,
  CHAIN_FORMAT,
  hashedContent,
  linkHash,
  linkRecords,
  groupByChain,
  type HashedContent,
} from './hash-chain.js';
export {
  ChainVerifier,
  verifyChains,
  byCodeUnits,
  type VerifiableRecord,
  type BrokenLink,
  type ReadChainPage,
  type VerifyChainsInput,
} from './verify.js';
export {
  DEFAULT_QUERY_LIMIT,
  MAX_QUERY_LIMIT,
  queryLimit,
  timeBound,
  matchesQuery,
  matchesWhoDid,
  compareStored,
  whoDidEntry,
  splitWhoDid,
} from './query.js';
export { deepFreeze } from './deep-freeze.js';

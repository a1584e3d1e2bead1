/**
 * Enterprise integration patterns: REST wrappers with token providers and error mapping,
 * token forwarding by reference, the status-check pattern for systems without idempotency keys,
 * file systems confined to a root, and named parameterized queries.
 */
export { silentIntegrationLogger, type IntegrationLogger } from './logger.js';
export { Secret } from './secret.js';
export { clientCredentialNames, type SecretsSource } from './secrets-source.js';
export { MemorySecretsSource } from './memory-secrets.js';
export {
  EnvFileSecretsSource,
  envVariableName,
  parseEnvFile,
  type EnvFileSecretsOptions,
} from './env-file-secrets.js';
export type { TokenProvider } from './token-provider.js';
export {
  createClientCredentialsProvider,
  type ClientCredentialsOptions,
} from './client-credentials-provider.js';
export {
  errorForStatus,
  errorForTransport,
  HttpStatusError,
  type ErrorWording,
  type StatusWordings,
} from './http-error.js';
export { restPath } from './rest-path.js';
export {
  RestClient,
  type HttpMethod,
  type RestAuth,
  type RestClientOptions,
  type RestRequest,
} from './rest-client.js';
export {
  assertDeposit,
  DEFAULT_MAX_REFERENCE_TTL_MS,
  isTokenReference,
  newTokenReference,
  type DelegatedToken,
  type DepositOptions,
  type TokenReferenceMode,
  type TokenReferenceStore,
} from './token-reference-store.js';
export { MemoryTokenReferenceStore, type MemoryTokenReferenceOptions } from './memory-token-references.js';
export { RedisTokenReferenceStore, type RedisTokenReferenceOptions } from './redis-token-references.js';
export { delegatingUser, forwardedUserToken, withDelegatedToken } from './forwarded-token.js';
export {
  MemorySubmissionLedger,
  PostgresSubmissionLedger,
  type SubmissionLedger,
} from './submission-ledger.js';
export {
  StatusCheckAdapter,
  type CheckAnswer,
  type StatusCheckAdapterOptions,
  type StatusCheckedSystem,
  type StatusCheckTiming,
  type SubmitOutcome,
  type SubmitPath,
} from './status-check-adapter.js';
export { relativePathSegments, type PathRefusal, type PathRules } from './path-rules.js';
export { ConfinedFs, type ConfinedFsOptions, type ConfinedRead } from './confined-fs.js';
export {
  defineNamedQuery,
  namedQueryChoice,
  runNamedQuery,
  type NamedQuery,
  type NamedQueryResult,
  type NamedQuerySpec,
  type RunNamedQueryOptions,
} from './named-queries.js';

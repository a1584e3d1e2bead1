/**
 * `toolgate`: what a user of the package imports — defining tools and their failures, the call and
 * result vocabulary, exporting tools to a provider, business rules, principal keys, the event bus
 * and codecs, and the ports an adapter implements. The agent SDK, the executor, the embedded
 * topology, the test kit and the store adapters have entry points of their own (`toolgate/sdk`,
 * `toolgate/executor`, `toolgate/embedded`, `toolgate/testing`, `toolgate/adapters/*`). Everything
 * else in libs/ is internal: code in this repository imports it from its module.
 */

// The call and result vocabulary.
export type {
  ExecutionContext,
  NormalizedToolCall,
  Principal,
  ResultError,
  StatusCheckAnswer,
  ToolCallResult,
} from './core/types.js';
export { OUTCOMES, type Outcome } from './core/outcome.js';
export { ERROR_CODES, ToolgateError, type ErrorCode } from './core/errors.js';
export type { Clock } from './core/clock.js';
export { systemClock } from './core/system-clock.js';
export { ManualClock } from './core/manual-clock.js';

// Defining tools, and how a tool reports a failure.
export { defineTool, type ToolDefinitionInput } from './registry/define-tool.js';
export { ToolDefinitionError } from './registry/definition-error.js';
export type {
  CostEstimate,
  LongRunning,
  RateLimitSpec,
  RetryPolicy,
  RetrySafety,
  StatusCheck,
  ToolDefinition,
  ToolInvocation,
} from './registry/tool-definition.js';
export type { ToolRegistry } from './registry/tool-registry.js';
export { callerError, outcomeUnknown, serverError } from './core/tool-failure.js';
export {
  StatusCheckAdapter,
  type StatusCheckAdapterOptions,
  type StatusCheckedSystem,
} from './integrations/status-check-adapter.js';

// Offering tools to a model.
export { toOpenAITools, type OpenAIExportOptions } from './registry/export-openai.js';
export { toAnthropicTools } from './registry/export-anthropic.js';

// Business rules.
export { createPolicyEngine, type PolicySource } from './policy/policy-engine.js';
export { PolicyRulesError, type PolicyCheck, type PolicyRule } from './policy/policy-rule.js';
export type { PolicyDecision, PolicyEngine, FactValues } from './pipeline/deps.js';
export type { AggregateFact, FactDimension } from './core/aggregate-fact.js';

// The signed principal: keys, signing (the agent backend) and verification (the executor).
export { generatePrincipalKeys, type PrincipalKeyPair } from './auth/principal-keys.js';
export { signPrincipal, type PrincipalSigningKey, type SignPrincipalOptions } from './auth/sign-principal.js';
export {
  createPrincipalVerifier,
  type PrincipalVerificationKey,
  type PrincipalVerifier,
  type PrincipalVerifierOptions,
} from './auth/principal-verifier.js';
export { DEFAULT_PRINCIPAL_AUDIENCE, DEFAULT_PRINCIPAL_ISSUER } from './auth/principal-defaults.js';
export { PrincipalRefusedError } from './auth/principal-refusal.js';

// The event bus, topics and codecs.
export { KafkaEventBus, type KafkaEventBusOptions } from './bus/kafka/kafka-event-bus.js';
export { MemoryEventBus, type MemoryEventBusOptions } from './bus/memory/memory-event-bus.js';
export { topicNames, type TopicNames } from './events/topics.js';
export type { EventCodec } from './events/event-codec.js';
export { LocalEventCodec } from './events/local-codec.js';
export { RegistryEventCodec, type RegistryCodecOptions } from './events/registry-codec.js';

// The ports an adapter implements (the store adapters are `toolgate/adapters/*`).
export type { EventBus, EventPublisher, EventSubscriber, KeyedSubscriber } from './ports/event-bus.js';
export type { IdempotencyStore } from './ports/idempotency-store.js';
export type { BucketLimit, RateLimiter } from './ports/rate-limiter.js';
export type { FactStore, FactContribution, FactSeriesQuery } from './ports/fact-store.js';
export type { AuditStore } from './ports/audit-store.js';
export type { AuditRecord } from './core/audit-record.js';
export type { CaseStore, ReconciliationCase } from './ports/case-store.js';
export { silentLogger, type Logger } from './ports/logger.js';

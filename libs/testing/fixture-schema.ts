import { z } from 'zod';
import { OUTCOMES } from '../core/outcome.js';

/**
 * The verified caller of a fixture: a name the harness was given in `principals` (looked up when
 * the fixture runs, so an unknown name is refused there, with the names the harness knows), or a
 * principal written out in full.
 */
export const fixturePrincipalSchema = z.union([
  z.string().min(1),
  z.strictObject({
    id: z.string().min(1),
    tenant: z.string().min(1),
    kind: z.enum(['user', 'agent', 'service']),
    onBehalfOf: z.string().optional(),
    roles: z.array(z.string()).readonly(),
    scopes: z.array(z.string()).readonly(),
  }),
]);

/** Which earlier call another expectation refers to: the round (1-based) and the provider call id. */
export const callRefSchema = z.strictObject({ round: z.int().min(1), call: z.string().min(1) });

/** What toolgate must answer for one call of a round, keyed by the provider call id. */
export const callExpectationSchema = z.strictObject({
  outcome: z.enum(OUTCOMES),
  /** The result's error code (e.g. CALLER_ERROR under EXECUTION_ERROR). */
  errorCode: z.string().optional(),
  /** Substrings the model-visible error message must contain (case-sensitive). */
  messageIncludes: z.array(z.string()).optional(),
  /** How many times the tool itself ran for this attempt (0: refused before execution, or a repeat). */
  toolInvocations: z.int().min(0).optional(),
  /** Fields the payload must carry with exactly these values. */
  payloadIncludes: z.record(z.string(), z.unknown()).optional(),
  /** The payload must deep-equal that earlier call's payload (a repeat answered with the original). */
  samePayloadAs: callRefSchema.optional(),
  /** The idempotency key must equal that earlier call's key (a retry of the same logical call). */
  sameKeyAs: callRefSchema.optional(),
});

/**
 * One round of the conversation: what the "model" answers (a provider response, exactly as the
 * provider's API returns it) and what toolgate must make of it.
 */
export const fixtureRoundSchema = z.strictObject({
  /** Why this round exists, shown in failure messages' context. */
  note: z.string().optional(),
  /** The agent loop's step for this turn; a retried turn repeats the step of the turn it retries. */
  step: z.int().min(0),
  provider: z.enum(['openai', 'anthropic']),
  /** OpenAI: a ChatCompletion or its assistant message. Anthropic: a Message (at least `content`). */
  response: z.record(z.string(), z.unknown()),
  expect: z.strictObject({
    /** Every call of the response must be listed: an unlisted call is a failure too. */
    calls: z.record(z.string(), callExpectationSchema),
    /**
     * Requests the downstreams behind the tools received during this round, as
     * `<downstream>.<operation>` (e.g. `payments.refund`) or `<downstream>` for all of its
     * operations, counted by the harness's `world.requestCounts`. Proves a refused call never
     * reached the tool.
     */
    downstreamRequests: z.record(z.string(), z.int().min(0)).optional(),
  }),
});

/** A recorded or hand-written conversation script, replayed through the real pipeline. */
export const agentFixtureSchema = z.strictObject({
  /** Kebab-case, unique: it prefixes the task id and names the fixture in every failure. */
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
  description: z.string().min(1),
  /** Where the rounds come from: hand-written, or recorded from a named model on a date. */
  source: z.string().min(1),
  principal: fixturePrincipalSchema,
  rounds: z.array(fixtureRoundSchema).min(1),
  /**
   * Checked once after the last round: per fact the harness's `world.facts` can read (e.g. the
   * store's `ledgerRows`: refund rows the payment ledger holds), per subject (an order id, a
   * ticket id...), the value the fact must have, compared with deep equality.
   */
  after: z.record(z.string().min(1), z.record(z.string().min(1), z.json())).optional(),
});

export type AgentFixture = z.infer<typeof agentFixtureSchema>;
export type FixtureRound = z.infer<typeof fixtureRoundSchema>;
export type CallExpectation = z.infer<typeof callExpectationSchema>;
export type CallRef = z.infer<typeof callRefSchema>;

import { randomBytes } from 'node:crypto';
import type { Admin } from 'kafkajs';
import { z } from 'zod';
import type { PostgresCaseStore } from '../../../libs/adapters/postgres/case-store.js';
import { signPrincipal } from '../../../libs/auth/sign-principal.js';
import type { Principal } from '../../../libs/core/types.js';
import type { ToolCallRequestedEvent, ToolCallResultEvent } from '../../../libs/events/contracts.js';
import type { EventPublisher } from '../../../libs/ports/event-bus.js';
import type { CaseState, ReconciliationCase } from '../../../libs/ports/case-store.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import type { Executor } from '../../../services/executor/executor.js';
import { createOperations, type Operations } from '../../../libs/reconcile/operations.js';
import { kafkaOriginalCalls, type OriginalCalls } from '../../../libs/reconcile/original-call.js';
import { createReconciler, type Reconciler } from '../../../services/reconciler/reconciler.js';
import { resubmissionSigner } from '../../../services/reconciler/resubmission-signer.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import { schemaRegistryUrl, REDIS_URL } from '../../helpers/env.js';
import type { TestSchema } from '../../helpers/postgres.js';
import { signedRequest } from '../../unit/executor/call-requests.js';
import { eventStackExecutor, eventually, type EventStack } from '../audit-sink/event-stack.js';
import { redisTestStores, testCatalog } from '../executor/test-parts.js';
import { databaseUrlFor } from '../cli/cli-env.js';
import { openReconcilerServers, reconcilerDeps, signingKeys } from './reconciler-parts.js';

const ISSUER = 'agent-backend-ops';
const AUDIENCE = 'toolgate-executor-ops';
const TENANT = 't1';
export const VAULT_SCOPE = 'vault:transfer';
const PRINCIPAL: Principal = {
  id: 'agent-9',
  tenant: TENANT,
  kind: 'agent',
  scopes: [VAULT_SCOPE],
  roles: [],
};

/** How a `vault_transfer` call behaves the first time its idempotency key runs; later runs succeed. */
export type FirstRun = 'fails' | 'hangs';

/** The arguments of `vault_transfer`: two allow-listed fields and two secrets. */
export interface TransferArgs {
  readonly account: string;
  readonly amount: number;
  readonly api_key: string;
  readonly password: string;
  readonly first_run: FirstRun;
}

/** A fresh pair of secret values, long and distinctive enough to search stored bytes for. */
export function freshSecrets(): Pick<TransferArgs, 'api_key' | 'password'> {
  return {
    api_key: `sk_live_${randomBytes(16).toString('hex')}`,
    password: `pw-${randomBytes(12).toString('hex')}`,
  };
}

/** Every run of the tool, by idempotency key: the arguments it received. */
export type Ledger = Map<string, TransferArgs[]>;

/** The tools of the stack: the same transfer, without and with a forwarded idempotency key. */
export type VaultToolName = 'vault_transfer' | 'vault_transfer_keyed';

/**
 * `vault_transfer`: state-changing, retry safety none (an unknown outcome is UNRESOLVED), audit
 * allow-list `account` and `amount` only. The first run of a key fails with a 503 (EXHAUSTED: the
 * action was not done) or hangs into its 300 ms timeout (UNRESOLVED); every later run succeeds.
 * Each run is recorded in `ledger` with the arguments it got, so tests count invocations.
 * `vault_transfer_keyed` is the same with retry safety `forwards-key` (the vault deduplicates on
 * the key it is given): an UNRESOLVED call of it is safe to run again.
 */
function vaultTool(ledger: Ledger, name: VaultToolName = 'vault_transfer'): ToolDefinition {
  return defineTool({
    name,
    ...(name === 'vault_transfer_keyed' ? { retrySafety: { kind: 'forwards-key' as const } } : {}),
    version: '1.0.0',
    description: 'Move money between vault accounts with the caller-supplied vault credentials.',
    input: z.object({
      account: z.string().min(1),
      amount: z.number().positive(),
      api_key: z.string().min(1),
      password: z.string().min(1),
      first_run: z.enum(['fails', 'hangs']),
    }),
    output: z.object({ transfer_id: z.string(), status: z.string() }),
    scopes: [VAULT_SCOPE],
    owner: 'vault-team',
    timeoutMs: 300,
    auditFields: ['account', 'amount'],
    conflictKey: (args, ctx) => `${ctx.tenant}:account:${args.account}`,
    downstream: 'vault',
    execute: async (args, inv) => {
      const runs = ledger.get(inv.idempotencyKey) ?? [];
      runs.push(args);
      ledger.set(inv.idempotencyKey, runs);
      if (runs.length === 1 && args.first_run === 'fails') {
        throw Object.assign(new Error('vault unavailable'), { status: 503 });
      }
      if (runs.length === 1 && args.first_run === 'hangs') {
        await new Promise<never>((_, reject) => {
          inv.signal.addEventListener('abort', () => reject(inv.signal.reason as Error), { once: true });
        });
      }
      return { transfer_id: `TR-${inv.idempotencyKey.slice(-6)}`, status: 'done' };
    },
  }) as unknown as ToolDefinition;
}

/** A publisher that waits `delayMs()` before every publish to the calls topic (re-submissions). */
function delayedCalls(inner: EventPublisher, callsTopic: string, delayMs: () => number): EventPublisher {
  return {
    async publish(topic, messages) {
      const wait = topic === callsTopic ? delayMs() : 0;
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      return inner.publish(topic, messages);
    },
  };
}

/**
 * The executor, the reconciler and the ops operations on real Kafka, the schema registry, Postgres
 * (cases) and Redis (idempotency), with `vault_transfer` and `vault_transfer_keyed` as the only tools. Operations are the ones
 * the ops CLI wires (createOperations, with the calls topic reader); `env` points the real CLI at
 * the same servers.
 */
export interface OperatorStack {
  readonly stack: EventStack;
  readonly db: TestSchema;
  readonly cases: PostgresCaseStore;
  readonly ledger: Ledger;
  readonly ops: Operations;
  /** Set to delay the operations' re-submissions (ms). */
  publishDelayMs: number;
  /** The CLI's environment for these servers. */
  readonly env: Record<string, string>;
  /** A fresh principal assertion for a re-submission. */
  assertion(): Promise<string>;
  /** A signed `vault_transfer` (or `tool`) request, its arguments with fresh secrets. */
  request(
    account: string,
    firstRun: FirstRun,
    secrets?: Pick<TransferArgs, 'api_key' | 'password'>,
    tool?: VaultToolName,
  ): Promise<{
    request: ToolCallRequestedEvent;
    args: TransferArgs;
  }>;
  publish(requests: readonly ToolCallRequestedEvent[]): Promise<void>;
  /** Waits for the call's case to reach `state`. */
  caseIn(callId: string, state: CaseState, timeoutMs?: number): Promise<ReconciliationCase>;
  /** Every result event on the results topic so far. */
  results(): Promise<ToolCallResultEvent[]>;
  /** Tool runs for one idempotency key so far. */
  runs(idempotencyKey: string): number;
  /** Waits until the executors have consumed and committed everything on the calls topic. */
  drained(): Promise<void>;
  close(): Promise<void>;
}

/** How the stack's reconciler runs. */
export interface OperatorStackOptions {
  /**
   * The reconciler redrives UNRESOLVED calls of `vault_transfer_keyed` by itself, signing each
   * re-submission with a key the executor trusts (as RECONCILER_SIGNING_KEY_FILE does), with this
   * grace before it reads the executor's answer. Undefined: no automatic redrives.
   */
  readonly autoRedriveGraceMs?: number;
}

export async function startOperatorStack(
  name: string,
  options: OperatorStackOptions = {},
): Promise<OperatorStack> {
  const servers = await openReconcilerServers(name);
  const { stack, db, redis, idempotency, cases } = servers;
  const ledger: Ledger = new Map();
  const registry = new ToolRegistry();
  registry.register(vaultTool(ledger));
  registry.register(vaultTool(ledger, 'vault_transfer_keyed'));
  const { privateKey, jwks } = signingKeys();
  const signing = { key: privateKey, issuer: ISSUER, audience: AUDIENCE, kid: 'k1', ttlSeconds: 600 };
  const executorGroup = `${stack.prefix}-executors`;
  const executor: Executor = eventStackExecutor(stack, {
    catalog: testCatalog(registry, name),
    ...redisTestStores(redis),
    jwks,
    issuer: ISSUER,
    audience: AUDIENCE,
    settings: { maxConcurrency: 8 },
  });
  const admin: Admin = await stack.kafka.admin();
  const originalCalls: OriginalCalls = kafkaOriginalCalls({
    kafka: stack.kafka.kafka,
    codec: stack.codec,
    groupPrefix: `${stack.prefix}-reads`,
  });
  const common = { ...reconcilerDeps(stack, { cases, idempotency, tools: registry }), originalCalls };
  const reconcilerId = `${stack.prefix}-reconciler`;
  const reconciler: Reconciler = createReconciler({
    ...common,
    reconcilerId,
    groupId: `${stack.prefix}-reconcilers`,
    checkScheduleMs: [100],
    pollIntervalMs: 50,
    ...(options.autoRedriveGraceMs === undefined
      ? {}
      : {
          resubmitGraceMs: options.autoRedriveGraceMs,
          resubmissionAssertion: resubmissionSigner(
            {
              keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
              kid: 'k1',
              issuer: ISSUER,
              audience: AUDIENCE,
            },
            reconcilerId,
            systemClock,
          ),
        }),
  });
  await Promise.all([executor.start(), reconciler.start()]);

  let n = 0;
  const self: OperatorStack = {
    stack,
    db,
    cases,
    ledger,
    publishDelayMs: 0,
    ops: undefined as unknown as Operations,
    env: {
      DATABASE_URL: databaseUrlFor(db.schema),
      KAFKA_BROKERS: stack.kafka.brokers.join(','),
      SCHEMA_REGISTRY_URL: schemaRegistryUrl(),
      REDIS_URL,
      REDIS_KEY_PREFIX: redis.prefix,
      TOOLGATE_TOPIC_PREFIX: stack.prefix,
    },
    assertion: () =>
      signPrincipal(PRINCIPAL, privateKey, {
        issuer: ISSUER,
        audience: AUDIENCE,
        ttlSeconds: 600,
        kid: 'k1',
      }),
    async request(account, firstRun, secrets = freshSecrets(), tool = 'vault_transfer') {
      n += 1;
      const args: TransferArgs = { account, amount: 25, ...secrets, first_run: firstRun };
      const request = await signedRequest(
        {
          callId: `${stack.prefix}-call-${n}`,
          providerCallId: `toolu_${n}`,
          tool,
          toolVersion: null,
          argumentsJson: JSON.stringify(args),
          tenant: TENANT,
          taskId: `${stack.prefix}-task-${n}`,
          step: 1,
          index: 0,
          resourceKey: `${TENANT}:account:${account}`,
          traceId: randomBytes(16).toString('hex'),
          replyTopic: stack.topics.results,
          replyPartition: 1,
          deadlineMs: null,
          requestedAtMs: Date.now(),
        },
        PRINCIPAL,
        signing,
        {},
      );
      return { request, args };
    },
    publish: (requests) =>
      stack.publish(
        'calls',
        requests.map((r) => ({ key: r.resourceKey, event: r })),
      ),
    caseIn: (callId, state, timeoutMs = 30_000) =>
      eventually(
        `case of ${callId} in ${state}`,
        async () => {
          const c = await cases.get({ callId });
          return c?.state === state ? c : undefined;
        },
        timeoutMs,
      ),
    async results() {
      const ends = await admin.fetchTopicOffsets(stack.topics.results);
      const count = ends.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
      return count === 0 ? [] : (await stack.read('results', count, 15_000)).map((r) => r.event);
    },
    runs: (key) => ledger.get(key)?.length ?? 0,
    async drained() {
      await eventually('the calls topic consumed and committed', async () => {
        const ends = await admin.fetchTopicOffsets(stack.topics.calls);
        const [committed] = await admin.fetchOffsets({
          groupId: executorGroup,
          topics: [stack.topics.calls],
        });
        return ends.every((end) => {
          const at = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
          return BigInt(end.high) === 0n || BigInt(at) >= BigInt(end.high);
        });
      });
    },
    async close() {
      await Promise.all([executor.stop(), reconciler.stop()]);
      await servers.close();
    },
  };
  (self as { ops: Operations }).ops = createOperations({
    ...common,
    publisher: delayedCalls(stack.bus, stack.topics.calls, () => self.publishDelayMs),
    deliveryTimeoutMs: 20_000,
  });
  return self;
}

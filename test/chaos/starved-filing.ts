import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { migrate } from '../../libs/adapters/postgres/migrate.js';
import type { ExecutionContext, ToolCallResult } from '../../libs/core/types.js';
import { systemClock } from '../../libs/core/system-clock.js';
import type { StatusCheckTiming } from '../../libs/integrations/status-check-adapter.js';
import { PostgresSubmissionLedger } from '../../libs/integrations/submission-ledger.js';
import type { GuardPipeline } from '../../libs/pipeline/guard-pipeline.js';
import { createPolicyEngine } from '../../libs/policy/index.js';
import { runStatusCheck } from '../../libs/reconcile/status-check.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../libs/registry/tool-registry.js';
import { submitFilingTool } from '../../services/catalog/tools/submit-filing.js';
import { LegacyFilingClient } from '../../services/legacy-filing/client.js';
import { msFromLegacyTimestampMs } from '../../services/legacy-filing/wire.js';
import { dieWithParent } from '../helpers/cpu-hog.js';
import { DATABASE_URL } from '../helpers/env.js';
import { memoryPipeline } from '../helpers/memory-pipeline.js';
import { createTestSchema, type TestSchema } from '../helpers/postgres.js';
import { startPauser, type PauseOptions, type PauseReport } from '../helpers/process-pauser.js';
import {
  call,
  context,
  filingArgs,
  legacyKey,
  runGrouped,
  type FilingArgs,
} from '../integration/legacy-filing/harness.js';

/**
 * submit_filing through the real guard pipeline against the fake legacy filing service running as
 * its own process (services/legacy-filing/main.ts, as legacy-service-process.test.ts starts it), so
 * the service can be frozen with SIGSTOP while the test process keeps sending: its requests then
 * wait in the service's socket buffer past their deadline. Every submission the tool sends is
 * recorded by the test's fetch (natural key, deadline, how it ended) and attributed to the pipeline
 * run that made it, and every filing is matched to the send that created it by its deadline
 * (`expires_at` is the `ExpiresAt` the send carried): so "a call reported failed whose filing
 * exists" is decided per call, not per return.
 */

const MAIN = fileURLToPath(new URL('../../services/legacy-filing/main.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface LegacyChildOptions {
  readonly name: string;
  readonly faults: {
    readonly dropAfterCommit?: number;
    readonly dropBeforeCommit?: number;
    readonly slow?: number;
  };
  readonly slowMs?: number;
  /** The service's own commit window, counted from when it gets to a request. */
  readonly commitWindowMs: number;
  readonly seed: number;
  readonly timing: StatusCheckTiming;
}

/** One submission the tool sent, as the test's fetch saw it. */
export interface SendRecord {
  /** The pipeline run that sent it (see {@link LegacyChild.as}). */
  readonly run: string | undefined;
  /** `filer|form|period` in the legacy codes (as `legacyKey` spells it). */
  readonly key: string;
  readonly expiresMs: number;
  ended: 'pending' | 'answered' | 'cut' | 'timed-out' | `http-${number}`;
}

/** One stored filing. */
export interface Filing {
  readonly key: string;
  readonly confirmation: string;
  readonly expiresMs: number | null;
}

export interface LegacyChild {
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcess;
  readonly db: TestSchema;
  readonly tool: ToolDefinition;
  readonly pipeline: GuardPipeline;
  readonly sends: readonly SendRecord[];
  /** Runs `work` as pipeline run `run`: the submissions it sends are attributed to it. */
  as<T>(run: string, work: () => Promise<T>): Promise<T>;
  filings(): Promise<Filing[]>;
  /** The service's last stderr lines, for diagnostics. */
  stderr(): string;
  close(): Promise<void>;
}

export async function startLegacyChild(options: LegacyChildOptions): Promise<LegacyChild> {
  const db = await createTestSchema(options.name);
  await migrate(db.pool);
  const stderr: string[] = [];
  const argv = [...dieWithParent(), process.execPath, '--import', 'tsx', MAIN];
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATABASE_URL,
      LEGACY_FILING_SCHEMA: db.schema,
      LEGACY_FILING_PORT: '0',
      LEGACY_FILING_COMMIT_WINDOW_MS: String(options.commitWindowMs),
      LEGACY_FILING_DROP_AFTER_COMMIT_RATE: String(options.faults.dropAfterCommit ?? 0),
      LEGACY_FILING_DROP_BEFORE_COMMIT_RATE: String(options.faults.dropBeforeCommit ?? 0),
      LEGACY_FILING_SLOW_RATE: String(options.faults.slow ?? 0),
      LEGACY_FILING_SLOW_MS: String(options.slowMs ?? 0),
      LEGACY_FILING_FAULT_SEED: String(options.seed),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr.push(chunk);
    if (stderr.length > 50) stderr.shift();
  });
  const exited = new Promise<void>((resolve) =>
    child.exitCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
  let url: string;
  try {
    url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the legacy service did not start in 90 s')), 90_000);
      createInterface({ input: child.stdout }).once('line', (line) => {
        clearTimeout(timer);
        try {
          resolve((JSON.parse(line) as { listening: string }).listening);
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the legacy service exited (${code}) before listening: ${stderr.join('')}`));
      });
    });
  } catch (err) {
    child.kill('SIGKILL');
    await db.drop().catch(() => undefined);
    throw err;
  }

  const runs = new AsyncLocalStorage<string>();
  const sends: SendRecord[] = [];
  // The tool's own fetch: notes each submission, attributed to the pipeline run it belongs to.
  const noting: typeof fetch = async (input, init) => {
    if (init?.method !== 'POST' || typeof init.body !== 'string') return fetch(input, init);
    const body = JSON.parse(init.body) as Record<string, string>;
    const record: SendRecord = {
      run: runs.getStore(),
      key: `${body.FilerId}|${body.FormType}|${body.Period}`,
      expiresMs: msFromLegacyTimestampMs(body.ExpiresAt ?? '') ?? -1,
      ended: 'pending',
    };
    sends.push(record);
    try {
      const response = await fetch(input, init);
      record.ended =
        response.status === 201 || response.status === 200 ? 'answered' : `http-${response.status}`;
      return response;
    } catch (err) {
      record.ended = init.signal?.aborted === true ? 'timed-out' : 'cut';
      throw err;
    }
  };
  const client = new LegacyFilingClient({
    baseUrl: url,
    clock: systemClock,
    timeoutMs: 10_000,
    fetch: noting,
  });
  const tool = submitFilingTool({
    client,
    ledger: new PostgresSubmissionLedger(db.pool),
    clock: systemClock,
    timing: options.timing,
  }) as unknown as ToolDefinition;
  const registry = new ToolRegistry();
  registry.register(tool);
  // As test/integration/legacy-filing/harness.ts builds it.
  const { pipeline, breakers } = memoryPipeline({
    clock: systemClock,
    tools: registry,
    policy: createPolicyEngine({ version: 'test' }, []),
    downstreamLimits: {},
    owner: 'executor-starved',
    breaker: { errorThresholdPercentage: 95, volumeThreshold: 10_000, resetTimeoutMs: 10_000 },
    settings: { resultTtlMs: 600_000, leaseMarginMs: 2_000 },
  });

  return {
    url,
    pid: child.pid!,
    child,
    db,
    tool,
    pipeline,
    sends,
    as: (run, work) => runs.run(run, work),
    async filings() {
      const { rows } = await db.pool.query<{
        key: string;
        confirmation_no: string;
        expires_ms: string | null;
      }>(
        `SELECT filer_id || '|' || form_type || '|' || period AS key, confirmation_no,
                round(extract(epoch FROM expires_at) * 1000)::bigint AS expires_ms
           FROM legacy_filings WHERE tenant_id = 't1' ORDER BY seq`,
      );
      return rows.map((r) => ({
        key: r.key,
        confirmation: r.confirmation_no,
        expiresMs: r.expires_ms === null ? null : Number(r.expires_ms),
      }));
    },
    stderr: () => stderr.join(''),
    async close() {
      // A stopped service would never see SIGTERM.
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      breakers.shutdown();
      await db.drop();
    },
  };
}

/** One planned call of submit_filing. */
export interface PlannedFiling {
  readonly args: FilingArgs;
  readonly taskId: string;
  /** The pipeline run's call id (unique per run; a redelivery shares the task and key, not this). */
  readonly callId: string;
  readonly kind: 'first' | 'second-task' | 'redelivery';
}

/**
 * `returns` returns, each filed once; as in status-check-under-lost-answers.test.ts, every 17th is
 * redelivered with the same task and key (a retry of the same call) and two in 17 are asked again by
 * another task (a new logical call for the same return). The calls of one return run in order.
 */
export function filingPlan(returns: number, tag: string): PlannedFiling[][] {
  const plan: PlannedFiling[][] = [];
  for (let i = 0; i < returns; i++) {
    const args = filingArgs(i);
    const group: PlannedFiling[] = [{ args, taskId: `${tag}-${i}`, callId: `${tag}-c${i}`, kind: 'first' }];
    if (i % 17 === 0)
      group.push({ args, taskId: `${tag}-${i}`, callId: `${tag}-c${i}-again`, kind: 'redelivery' });
    if (i % 17 === 1 || i % 17 === 2)
      group.push({ args, taskId: `${tag}-${i}-b`, callId: `${tag}-c${i}-b`, kind: 'second-task' });
    plan.push(group);
  }
  return plan;
}

interface Ran extends PlannedFiling {
  readonly result: ToolCallResult;
}

/** What a starved filing run did, and every broken promise by name (empty lists when none). */
export interface FilingFigures {
  readonly calls: number;
  readonly returns: number;
  readonly elapsedMs: number;
  readonly outcomes: Record<string, number>;
  /** How applied calls came to know their filing (`confirmed_by`). */
  readonly confirmedBy: Record<string, number>;
  readonly unresolved: number;
  /** What the status check (as the reconciler runs it) said of each UNRESOLVED call afterwards. */
  readonly unresolvedSettled: Record<string, number>;
  /** Failures with nothing filed for the return, by error code: honest. */
  readonly honestFailures: Record<string, number>;
  /**
   * Failures of a call whose own sends filed nothing while the return was filed by another call of
   * it (a second task, a redelivery after a failure): honest about this call, listed.
   */
  readonly failedBesideAnotherFiling: { readonly count: number; readonly examples: string[] };
  readonly sends: {
    readonly total: number;
    readonly answered: number;
    /** Connections the service cut (a fault), then whether the send was filed anyway. */
    readonly cutFiled: number;
    readonly cutUnfiled: number;
    /** Sends the adapter gave up on (its deadline passed unanswered), filed or not. */
    readonly timedOutFiled: number;
    readonly timedOutUnfiled: number;
    readonly httpErrors: number;
  };
  readonly pauses: Omit<PauseReport, 'log'>;
  readonly violations: {
    /** Returns filed more than once. */
    readonly duplicateFilings: string[];
    /** Calls reported failed (not SUCCESS, DUPLICATE or UNRESOLVED) whose own send was filed. */
    readonly falseFailures: string[];
    /** SUCCESS / DUPLICATE not naming the one filing of the return. */
    readonly misnamed: string[];
    /** Filings that match no send the tool made (by natural key and deadline). */
    readonly unattributed: string[];
    /** Filings that appeared after every call had ended and every deadline had passed. */
    readonly lateFilings: string[];
    /** UNRESOLVED calls the later status check settled against what is stored. */
    readonly unresolvedMissettled: string[];
  };
}

const APPLIED = new Set(['SUCCESS', 'DUPLICATE']);

/**
 * Runs `plan` through `svc`'s pipeline, `concurrency` returns at once, while the service is frozen
 * and resumed by a pauser (`pause`); then reads what the service stored and judges every call.
 */
export async function runStarvedFilings(
  svc: LegacyChild,
  plan: readonly (readonly PlannedFiling[])[],
  opts: { readonly concurrency: number; readonly pause: PauseOptions },
): Promise<FilingFigures> {
  const pauser = startPauser(svc.pid, opts.pause);
  const started = Date.now();
  let ran: Ran[];
  try {
    ran = await runGrouped<PlannedFiling, Ran>(plan, opts.concurrency, async (p) => {
      const { result } = await svc.as(p.callId, () =>
        svc.pipeline.run(call(p.args, p.callId), context(p.taskId)),
      );
      return { ...p, result };
    });
  } finally {
    await pauser.stop();
  }
  const elapsedMs = Date.now() - started;
  const { log: _log, ...pauses } = pauser.report();

  // Every send's deadline has passed by now (a call ends only after its sends' deadlines, plus the
  // margin, when they went unanswered). What is stored now is final: look twice to be sure.
  const filings = await svc.filings();
  await new Promise((r) => setTimeout(r, 2_000));
  const filingsLater = await svc.filings();

  const byKey = new Map<string, Filing[]>();
  for (const f of filings) byKey.set(f.key, [...(byKey.get(f.key) ?? []), f]);
  const sendOf = new Map(svc.sends.map((s) => [`${s.key}@${s.expiresMs}`, s]));
  const filedSends = new Set<SendRecord>();
  const unattributed: string[] = [];
  for (const f of filings) {
    const s = f.expiresMs === null ? undefined : sendOf.get(`${f.key}@${f.expiresMs}`);
    if (s === undefined) unattributed.push(`${f.key} ${f.confirmation} expires ${f.expiresMs}`);
    else filedSends.add(s);
  }
  const filedBy = (run: string): boolean => [...filedSends].some((s) => s.run === run);

  const outcomes: Record<string, number> = {};
  const confirmedBy: Record<string, number> = {};
  const honestFailures: Record<string, number> = {};
  const failedBesideAnotherFiling: string[] = [];
  const falseFailures: string[] = [];
  const misnamed: string[] = [];
  const unresolvedSettled: Record<string, number> = {};
  const unresolvedMissettled: string[] = [];
  const describe = (r: Ran): string =>
    `${r.callId} (${r.kind}) ${r.result.outcome}${r.result.error ? `/${r.result.error.code} "${r.result.error.message}"` : ''}; filings: ${(byKey.get(legacyKey(r.args)) ?? []).map((f) => f.confirmation).join(', ') || 'none'}; sends: ${svc.sends
      .filter((s) => s.run === r.callId)
      .map((s) => `${s.ended}${filedSends.has(s) ? ' (filed)' : ''}`)
      .join(', ')}`;

  for (const r of ran) {
    const o = r.result.error === undefined ? r.result.outcome : `${r.result.outcome}/${r.result.error.code}`;
    outcomes[o] = (outcomes[o] ?? 0) + 1;
    const stored = byKey.get(legacyKey(r.args)) ?? [];
    if (APPLIED.has(r.result.outcome)) {
      const payload = r.result.payload as { confirmation_number?: string; confirmed_by?: string } | undefined;
      const via = r.result.outcome === 'DUPLICATE' ? 'idempotency record' : (payload?.confirmed_by ?? '?');
      confirmedBy[via] = (confirmedBy[via] ?? 0) + 1;
      if (stored.length !== 1 || payload?.confirmation_number !== stored[0]!.confirmation)
        misnamed.push(`names ${payload?.confirmation_number}: ${describe(r)}`);
    } else if (r.result.outcome === 'UNRESOLVED') {
      const answer = await settleLater(svc.tool, r);
      unresolvedSettled[answer.state] = (unresolvedSettled[answer.state] ?? 0) + 1;
      const named = (answer as { result?: { confirmation_number?: string } }).result?.confirmation_number;
      if (
        (answer.state === 'applied' && (stored.length !== 1 || named !== stored[0]!.confirmation)) ||
        (answer.state === 'not-applied' && stored.length > 0)
      )
        unresolvedMissettled.push(`settled ${answer.state} ${named ?? ''}: ${describe(r)}`);
    } else if (filedBy(r.callId)) {
      falseFailures.push(describe(r));
    } else if (stored.length > 0) {
      failedBesideAnotherFiling.push(describe(r));
    } else {
      const code = r.result.error?.code ?? r.result.outcome;
      honestFailures[code] = (honestFailures[code] ?? 0) + 1;
    }
  }

  const count = (pred: (s: SendRecord) => boolean): number => svc.sends.filter(pred).length;
  return {
    calls: ran.length,
    returns: plan.length,
    elapsedMs,
    outcomes,
    confirmedBy,
    unresolved: ran.filter((r) => r.result.outcome === 'UNRESOLVED').length,
    unresolvedSettled,
    honestFailures,
    failedBesideAnotherFiling: {
      count: failedBesideAnotherFiling.length,
      examples: failedBesideAnotherFiling.slice(0, 3),
    },
    sends: {
      total: svc.sends.length,
      answered: count((s) => s.ended === 'answered'),
      cutFiled: count((s) => s.ended === 'cut' && filedSends.has(s)),
      cutUnfiled: count((s) => s.ended === 'cut' && !filedSends.has(s)),
      timedOutFiled: count((s) => s.ended === 'timed-out' && filedSends.has(s)),
      timedOutUnfiled: count((s) => s.ended === 'timed-out' && !filedSends.has(s)),
      httpErrors: count((s) => s.ended.startsWith('http-')),
    },
    pauses,
    violations: {
      duplicateFilings: [...byKey.entries()]
        .filter(([, fs]) => fs.length > 1)
        .map(([key, fs]) => `${key}: ${fs.map((f) => f.confirmation).join(', ')}`),
      falseFailures,
      misnamed,
      unattributed,
      lateFilings: filingsLater.slice(filings.length).map((f) => `${f.key} ${f.confirmation}`),
      unresolvedMissettled,
    },
  };
}

/** The status check of an UNRESOLVED call, as the reconciler runs it later (its own invocation). */
async function settleLater(
  tool: ToolDefinition,
  r: Ran,
): Promise<{ readonly state: string; readonly result?: unknown }> {
  const ctx: ExecutionContext = {
    principal: { id: 'reconciler-1', tenant: 't1', kind: 'service', scopes: [], roles: [] },
    tenant: 't1',
    taskId: r.taskId,
    step: 0,
    index: 0,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  };
  const settled = await runStatusCheck(
    tool,
    await tool.input.parseAsync(r.args),
    { ctx, idempotencyKey: r.result.idempotencyKey!, attempt: 1 },
    { timeoutMs: 10_000, clock: systemClock, signal: new AbortController().signal },
  );
  return settled.answer;
}

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { loadLocalConfig } from '../../../deploy/local/config.js';
import { silentLog } from '../../../deploy/local/log.js';
import { bringDown, bringUp, type ManagedServer } from '../../../deploy/local/managed-server.js';
import {
  prometheusRunDir,
  TOOLGATE_RULES_FILE,
  type PrometheusSettings,
} from '../../../deploy/local/prometheus-config.js';
import { ensurePrometheusInstalled, prometheusServer } from '../../../deploy/local/prometheus-server.js';
import { openAITurn, type ProposedCall } from '../../../services/demo/scripted-model.js';
import type { Principal } from '../../../libs/core/types.js';
import { connectModern } from '../mcp/mcp-clients.js';
import { dashboardQueries } from './dashboard-queries.js';
import { OPS_SCOPE, OPS_TOOLS } from './ops-catalog.js';
import { startOpsStack, type OpsStack } from './ops-stack.js';
import { activeAlerts, hasFiniteValue, instantQuery, targetHealth } from './prometheus-api.js';
import { freePort } from '../../helpers/ports.js';

/**
 * The operations check on real servers: two executors, the audit sink, the reconciler and the MCP
 * gateway run as processes (their own main.ts and config.ts) on Kafka, the schema registry, Redis
 * and Postgres; the test drives calls through the SDK and through the gateway with the official MCP
 * client, so every outcome happens; a real Prometheus (Debian's package) scrapes every service's
 * /metrics each second with toolgate's rules loaded. Then every query of every Grafana dashboard
 * must return data, and the breaker-open alert must fire.
 */
let stack: OpsStack;
let prometheus: ManagedServer;
let baseUrl: string;
let runDir: string;
const rss: Record<string, { idleKb: number; loadedKb?: number }> = {};

/** Toolgate's rules with every `for` set to 0s, so alerts fire within a test (promtool checks it). */
function rulesForTest(dir: string): string {
  const rules = parse(readFileSync(TOOLGATE_RULES_FILE, 'utf8')) as {
    groups: { interval?: string; rules: { alert?: string; for?: string }[] }[];
  };
  for (const group of rules.groups) {
    delete group.interval;
    for (const rule of group.rules) if (rule.alert !== undefined) rule.for = '0s';
  }
  const file = join(dir, 'toolgate-alerts-test.yml');
  writeFileSync(file, stringify(rules));
  execFileSync('promtool', ['check', 'rules', file], { stdio: 'pipe' });
  return file;
}

async function turn(principal: Principal, task: string, step: number, calls: ProposedCall[]) {
  const outcome = await stack.client.runTurn(openAITurn(`${task}-${step}`, calls), {
    principal,
    taskId: `${stack.prefix}-${task}`,
    step,
  });
  return outcome.results.map((r) => r.outcome);
}

/** One wave of traffic producing every outcome; run twice so every series has a rate. */
async function wave(n: number): Promise<string[]> {
  const seen: string[] = [];
  const add = (outcomes: string[]) => seen.push(...outcomes);
  const { reader, stranger } = stack;
  // 4 lookups per wave against a budget of 5 per principal: the second wave is rate limited.
  add(
    await turn(
      reader,
      `lookup-${n}`,
      1,
      [1, 2, 3, 4].map((i) => ({ tool: OPS_TOOLS.lookup, args: { id: `I-${i}` } })),
    ),
  );
  add(await turn(stranger, `stranger-${n}`, 1, [{ tool: OPS_TOOLS.lookup, args: { id: 'I-1' } }]));
  add(
    await turn(reader, `policy-${n}`, 1, [
      { tool: OPS_TOOLS.pay, args: { ref: `P-${n}`, amount: 500, mode: 'ok' } },
    ]),
  );
  const pay = [{ tool: OPS_TOOLS.pay, args: { ref: `P-ok-${n}`, amount: 10, mode: 'ok' } }];
  add(await turn(reader, `pay-${n}`, 1, pay));
  add(await turn(reader, `pay-${n}`, 1, pay)); // the same turn again: same idempotency key
  add(
    await turn(reader, `hang-${n}`, 1, [
      { tool: OPS_TOOLS.pay, args: { ref: `P-h-${n}`, amount: 5, mode: 'hang' } },
    ]),
  );
  add(await turn(reader, `invented-${n}`, 1, [{ tool: 'ops_refund_everything', args: {} }]));
  add(await turn(reader, `schema-${n}`, 1, [{ tool: OPS_TOOLS.lookup, args: { id: 42 } }]));
  // One task, one partition, one executor: its breaker for ops-flaky opens after three failures.
  for (let step = 1; step <= 5; step++) {
    add(await turn(reader, `flaky-${n}`, step, [{ tool: OPS_TOOLS.flaky, args: { q: `q${step}` } }]));
  }
  for (const [i, calls] of [4, 1, 1, 2, 1, 1, 1, 5].entries()) {
    stack.agentMetrics.observeTaskCompleted(calls, i === 0 ? 'succeeded' : 'failed');
  }
  return seen;
}

/**
 * One wave through the MCP gateway process, as an MCP client meets it: a tool listed and called,
 * a call the executors refuse, a request without a token and one without the gateway's scope.
 * Returns what the client saw.
 */
async function mcpWave(n: number): Promise<{ listed: string[]; answers: string[]; turnedAway: number[] }> {
  const token = await stack.mcpTokens.token({ sub: `mcp-reader-${n}`, scope: `mcp:tools ${OPS_SCOPE}` });
  const client = await connectModern(stack.mcpUrl, token);
  try {
    const listed = (await client.listTools()).tools.map((t) => t.name).sort();
    const ok = await client.callTool(OPS_TOOLS.lookup, { id: `M-${n}` });
    const refused = await client.callTool(OPS_TOOLS.lookup, { id: 42 });
    const answers = [ok, refused].map((a) =>
      a.isError === true
        ? `error:${JSON.stringify(a.structuredContent ?? a.content)}`
        : `ok:${JSON.stringify(a.structuredContent)}`,
    );
    const post = (authorization?: string) =>
      fetch(stack.mcpUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(authorization === undefined ? {} : { authorization }),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      }).then((r) => r.status);
    const noScope = await stack.mcpTokens.token({ sub: `mcp-stranger-${n}`, scope: OPS_SCOPE });
    const turnedAway = [await post(), await post(`Bearer ${noScope}`)];
    return { listed, answers, turnedAway };
  } finally {
    await client.close();
  }
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: Error | undefined;
  for (;;) {
    try {
      const got = await probe();
      if (got !== undefined) return got;
    } catch (err) {
      last = err instanceof Error ? err : new Error(String(err));
    }
    if (Date.now() > deadline)
      throw new Error(`${what} within ${timeoutMs} ms${last ? `: ${last.message}` : ''}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

beforeAll(async () => {
  // Never skipped: a machine that cannot install Prometheus fails here with the installer's output.
  ensurePrometheusInstalled(silentLog);
  stack = await startOpsStack();
  for (const s of stack.services) rss[s.name] = { idleKb: s.rssKb() };
  const port = await freePort();
  runDir = prometheusRunDir(loadLocalConfig().cacheDir, port);
  mkdirSync(runDir, { recursive: true });
  const settings: PrometheusSettings = {
    host: '127.0.0.1',
    port,
    intervalSec: 1,
    jobs: [
      { job: 'executor', targets: stack.executors.map((e) => `127.0.0.1:${e.httpPort}`) },
      { job: 'audit-sink', targets: [`127.0.0.1:${stack.auditSink.httpPort}`] },
      { job: 'reconciler', targets: [`127.0.0.1:${stack.reconciler.httpPort}`] },
      { job: 'agent', targets: [`127.0.0.1:${stack.agentPort}`] },
      { job: 'mcp-gateway', targets: [`127.0.0.1:${stack.mcpGateway.httpPort}`] },
    ],
    ruleFiles: [rulesForTest(runDir)],
    runDir,
  };
  prometheus = prometheusServer(settings);
  await bringUp(prometheus, 60_000, silentLog);
  baseUrl = prometheus.address;
  await until('every target scraped healthy', 30_000, async () => {
    const targets = await targetHealth(baseUrl);
    const jobs = settings.jobs.flatMap((j) => j.targets).length + 1;
    return targets.length === jobs && targets.every((t) => t.health === 'up') ? targets : undefined;
  });
}, 240_000);

afterAll(async () => {
  if (prometheus !== undefined) await bringDown(prometheus, silentLog);
  if (runDir !== undefined) rmSync(runDir, { recursive: true, force: true });
  await stack?.close();

  console.log(`service RSS (kB): ${JSON.stringify(rss)}`);
}, 120_000);

describe('dashboards and alerts on a real Prometheus', () => {
  it('every outcome happens, every panel query returns data, and the breaker alert fires', async () => {
    const first = await wave(1);
    const firstMcp = await mcpWave(1);
    await new Promise((r) => setTimeout(r, 3_000)); // a few scrapes between the waves
    const second = await wave(2);
    await mcpWave(2);
    // The gateway process, as an MCP client meets it: the caller's tools listed, a call answered
    // with its structured result, a bad call refused as an isError result, and no token or no
    // scope turned away before anything is published.
    expect(firstMcp.listed).toEqual(Object.values(OPS_TOOLS).sort());
    expect(firstMcp.answers[0]).toMatch(/^ok:\{.*"echo"/);
    expect(firstMcp.answers[1]).toMatch(/^error:.*SCHEMA_INVALID/);
    expect(firstMcp.turnedAway).toEqual([401, 403]);
    for (const outcome of [
      'SUCCESS',
      'DUPLICATE',
      'UNAUTHORIZED',
      'POLICY_VIOLATION',
      'UNRESOLVED',
      'UNKNOWN_TOOL',
      'SCHEMA_INVALID',
      'EXECUTION_ERROR',
    ]) {
      expect(first, outcome).toContain(outcome);
    }
    expect(second).toContain('RATE_LIMITED');
    for (const s of stack.services) rss[s.name]!.loadedKb = s.rssKb();

    // Each query with the dashboard variables set to every real value: a panel must show data for
    // at least one of them (the drill-down of a tool that is never rate limited rightly shows none).
    // The rate window stays wide enough that both waves are inside it while the test polls.
    const variants = Object.values(OPS_TOOLS).map((tool) => dashboardQueries({ tool }, '5m'));
    const panels = variants[0]!.map((q, i) => ({
      ...q,
      exprs: [...new Set(variants.map((v) => v[i]!.expr))],
    }));
    expect(panels.length).toBeGreaterThan(25);
    const withoutData = async (): Promise<string[]> => {
      const missing: string[] = [];
      for (const p of panels) {
        const answers = await Promise.all(p.exprs.map((e) => instantQuery(baseUrl, e)));
        if (!answers.some(hasFiniteValue))
          missing.push(`${p.dashboard} / ${p.panel} [${p.refId}]: ${p.exprs[0]}`);
      }
      return missing;
    };
    let missing: string[] = [];
    await until('every dashboard query returns a finite value', 60_000, async () => {
      missing = await withoutData();
      return missing.length === 0 ? missing : undefined;
    }).catch((err: Error) => {
      throw new Error(`${err.message}\nno data:\n${missing.join('\n')}`);
    });
    expect(missing).toEqual([]);

    // Outcomes as the overview shows them: all eight from the waves, under their own label.
    const outcomes = await instantQuery(baseUrl, 'sum by (outcome) (toolgate_tool_calls_total)');
    expect(outcomes.map((s) => s.metric.outcome).sort()).toEqual([...new Set([...first, ...second])].sort());
    // An invented tool name is counted as "unknown", never as a new series.
    const tools = await instantQuery(baseUrl, 'sum by (tool) (toolgate_tool_calls_total)');
    expect(tools.map((s) => s.metric.tool).sort()).toEqual([...Object.values(OPS_TOOLS), 'unknown'].sort());

    // ops-flaky's breaker must open; ops-payments' may open too (its two hanging calls are timeouts,
    // which count against a breaker), so look for the alert of the downstream that is down.
    const alert = await until('ToolgateCircuitBreakerOpen firing for ops-flaky', 30_000, async () => {
      const alerts = await activeAlerts(baseUrl);
      return alerts.find(
        (a) =>
          a.labels.alertname === 'ToolgateCircuitBreakerOpen' &&
          a.state === 'firing' &&
          a.labels.downstream === 'ops-flaky',
      );
    });
    expect(alert.labels.downstream).toBe('ops-flaky');
    const deadLetters = await instantQuery(baseUrl, 'sum by (reason) (toolgate_dead_letters_total)');
    expect(deadLetters.find((s) => s.metric.reason === 'UNRESOLVED')?.value[1]).toBe('2');
    const cases = await instantQuery(baseUrl, 'max by (state) (toolgate_reconciliation_cases)');
    expect(cases.find((s) => s.metric.state === 'open')?.value[1]).toBe('2');
  }, 240_000);
});

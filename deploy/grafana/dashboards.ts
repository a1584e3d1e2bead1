import type { DashboardSpec } from './dashboard-model.js';

/**
 * toolgate's Grafana dashboards as data. `npx tsx deploy/grafana/build-dashboards.ts` writes them to
 * deploy/grafana/dashboards/<uid>.json, which Grafana loads through provisioning; a unit test keeps
 * the files equal to these specs, and test/integration/ops runs every query against a Prometheus
 * scraping real services. Metric names: libs/observability/README.md; recorded series:
 * deploy/prometheus/rules/toolgate-alerts.yml.
 */

const R = '$__rate_interval';

const overview: DashboardSpec = {
  uid: 'toolgate-overview',
  title: 'toolgate / Overview',
  description: 'Throughput, outcomes, latency per tool and consumer lag across all executors.',
  tags: ['toolgate'],
  panels: [
    {
      title: 'Throughput',
      description: 'Tool calls reaching a terminal result per second, all executors.',
      unit: 'reqps',
      queries: [{ expr: `sum(rate(toolgate_tool_calls_total[${R}]))`, legend: 'calls/s' }],
    },
    {
      title: 'Outcomes',
      description: 'Terminal outcomes per second. UNRESOLVED calls are reconciled, not failed.',
      unit: 'reqps',
      stacked: true,
      queries: [{ expr: `sum by (outcome) (rate(toolgate_tool_calls_total[${R}]))`, legend: '{{outcome}}' }],
    },
    {
      title: 'p95 latency per tool',
      description: 'Entering the guard pipeline to the terminal result, over 5 minutes (recorded).',
      unit: 's',
      queries: [{ expr: 'tool:toolgate_tool_call_duration_seconds:p95_5m', legend: '{{tool}}' }],
    },
    {
      title: 'p99 latency per tool',
      description: 'As p95; a p99 near a tool timeout means calls are being cut off.',
      unit: 's',
      queries: [{ expr: 'tool:toolgate_tool_call_duration_seconds:p99_5m', legend: '{{tool}}' }],
    },
    {
      title: 'Consumer lag per topic',
      description: 'Messages not yet committed by the consuming group, counted once per partition.',
      unit: 'short',
      queries: [{ expr: 'group_topic:toolgate_consumer_lag_messages:max', legend: '{{group}} / {{topic}}' }],
    },
    {
      title: 'Calls in flight',
      description: 'Calls inside a guard pipeline right now, per executor.',
      unit: 'short',
      queries: [{ expr: 'sum by (instance) (toolgate_calls_in_flight)', legend: '{{instance}}' }],
    },
    {
      title: 'Refused before the tool',
      description: 'Share of calls refused by a guard stage (nothing reached a downstream).',
      type: 'stat',
      unit: 'percentunit',
      thresholds: [
        [null, 'green'],
        [0.2, 'orange'],
        [0.5, 'red'],
      ],
      queries: [
        {
          expr:
            'sum(rate(toolgate_tool_calls_total{outcome=~"UNKNOWN_TOOL|SCHEMA_INVALID|UNAUTHORIZED|RATE_LIMITED|POLICY_VIOLATION"}[5m]))' +
            ' / sum(rate(toolgate_tool_calls_total[5m]))',
          legend: 'refused',
        },
      ],
    },
    {
      title: 'Guard stage p95',
      description: 'How long each pipeline stage takes to decide; execute includes the tool.',
      unit: 's',
      queries: [
        {
          expr: `histogram_quantile(0.95, sum by (stage, le) (rate(toolgate_stage_duration_seconds_bucket[${R}])))`,
          legend: '{{stage}}',
        },
      ],
    },
    {
      title: 'Business rules: shadow disagreements and lost fact records',
      description:
        'Calls a shadow (candidate) policy would have decided otherwise, by tool and what it would have done; and settled calls whose contribution to an aggregate fact could not be recorded (a limit over it may let more through; should stay at 0).',
      unit: 'ops',
      queries: [
        {
          expr: `sum by (tool, shadow) (rate(toolgate_policy_shadow_disagreements_total[${R}]))`,
          legend: '{{tool}} shadow would {{shadow}}',
        },
        {
          expr: `sum by (tool) (rate(toolgate_policy_fact_record_failures_total[${R}]))`,
          legend: '{{tool}} facts lost',
        },
      ],
    },
  ],
};

const tool: DashboardSpec = {
  uid: 'toolgate-tool',
  title: 'toolgate / Tool drill-down',
  description: 'One tool: outcomes, latency, attempts, retries, replays, rate limits and tokens.',
  tags: ['toolgate'],
  variables: [{ name: 'tool', label: 'Tool', metric: 'toolgate_tool_calls_total', labelName: 'tool' }],
  panels: [
    {
      title: 'Outcomes of $tool',
      description: 'Terminal outcomes per second.',
      unit: 'reqps',
      stacked: true,
      queries: [
        {
          expr: `sum by (outcome) (rate(toolgate_tool_calls_total{tool="$tool"}[${R}]))`,
          legend: '{{outcome}}',
        },
      ],
    },
    {
      title: 'Latency of $tool',
      description: 'p50 / p95 / p99 over all outcomes.',
      unit: 's',
      queries: [0.5, 0.95, 0.99].map((q) => ({
        expr: `histogram_quantile(${q}, sum by (le) (rate(toolgate_tool_call_duration_seconds_bucket{tool="$tool"}[${R}])))`,
        legend: `p${Math.round(q * 100)}`,
      })),
    },
    {
      title: 'Latency of $tool by outcome (p95)',
      description: 'Refusals are fast; SUCCESS and UNRESOLVED carry the downstream time.',
      unit: 's',
      queries: [
        {
          expr: `histogram_quantile(0.95, sum by (outcome, le) (rate(toolgate_tool_call_duration_seconds_bucket{tool="$tool"}[${R}])))`,
          legend: '{{outcome}}',
        },
      ],
    },
    {
      title: 'Invocations of $tool by result',
      description: 'Each attempt at the downstream: ok, or the error code it ended with.',
      unit: 'reqps',
      queries: [
        {
          expr: `sum by (result) (rate(toolgate_tool_attempts_total{tool="$tool"}[${R}]))`,
          legend: '{{result}}',
        },
      ],
    },
    {
      title: 'Retries, replays and rate limits of $tool',
      description:
        'Attempts after the first; answers replayed from the idempotency store; refusals by the limiter.',
      unit: 'reqps',
      queries: [
        { expr: `sum(rate(toolgate_tool_retries_total{tool="$tool"}[${R}]))`, legend: 'retries' },
        { expr: `sum(rate(toolgate_idempotent_replays_total{tool="$tool"}[${R}]))`, legend: 'replays' },
        { expr: `sum(rate(toolgate_rate_limited_total{tool="$tool"}[${R}]))`, legend: 'rate limited' },
      ],
    },
    {
      title: 'Token equivalents of $tool',
      description: 'Arguments in and results out per second (libs/cost: characters / 4).',
      unit: 'short',
      queries: [
        {
          expr: `sum by (direction) (rate(toolgate_tool_call_tokens_sum{tool="$tool"}[${R}]))`,
          legend: '{{direction}}',
        },
      ],
    },
  ],
};

const downstreams: DashboardSpec = {
  uid: 'toolgate-downstreams',
  title: 'toolgate / Downstream health',
  description: 'Circuit breakers, failing invocations and the limits that hold calls back.',
  tags: ['toolgate'],
  panels: [
    {
      title: 'Breaker state (worst executor)',
      description: '0 closed, 1 half-open, 2 open; the worst state any executor reports.',
      type: 'stat',
      unit: 'short',
      thresholds: [
        [null, 'green'],
        [1, 'orange'],
        [2, 'red'],
      ],
      queries: [{ expr: 'max by (downstream) (toolgate_circuit_breaker_state)', legend: '{{downstream}}' }],
    },
    {
      title: 'Breaker state per executor',
      description: 'Each executor keeps its own breakers; they open independently.',
      unit: 'short',
      queries: [{ expr: 'toolgate_circuit_breaker_state', legend: '{{downstream}} @ {{instance}}' }],
    },
    {
      title: 'Failing invocations by code',
      description: 'Attempts that did not return ok: SERVER_ERROR, TIMEOUT, BREAKER_OPEN, …',
      unit: 'reqps',
      stacked: true,
      queries: [
        {
          expr: `sum by (result) (rate(toolgate_tool_attempts_total{result!="ok"}[${R}]))`,
          legend: '{{result}}',
        },
      ],
    },
    {
      title: 'Failing invocations by tool',
      description: 'The tools behind a failing downstream.',
      unit: 'reqps',
      queries: [
        {
          expr: `sum by (tool) (rate(toolgate_tool_attempts_total{result!="ok"}[${R}]))`,
          legend: '{{tool}}',
        },
      ],
    },
    {
      title: 'Refused by rate limits',
      description: 'Calls refused by the principal / tool / tenant budgets, per tool.',
      unit: 'reqps',
      queries: [{ expr: `sum by (tool) (rate(toolgate_rate_limited_total[${R}]))`, legend: '{{tool}}' }],
    },
    {
      title: 'Outbound budget wait p95',
      description:
        "How long calls wait for a downstream's shared outbound rate limit before they are sent; rising means the downstream's own limit is the bottleneck.",
      unit: 's',
      queries: [
        {
          expr: `histogram_quantile(0.95, sum by (le, downstream) (rate(toolgate_outbound_wait_seconds_bucket[${R}])))`,
          legend: '{{downstream}}',
        },
      ],
    },
    {
      title: 'Execute stage p95',
      description: 'Time in the execute stage, including waits for the outbound budget of a downstream.',
      unit: 's',
      queries: [
        {
          expr: `histogram_quantile(0.95, sum by (le) (rate(toolgate_stage_duration_seconds_bucket{stage="execute"}[${R}])))`,
          legend: 'execute p95',
        },
      ],
    },
    {
      title: 'Retries per tool',
      description: 'Invocations after the first for the same call.',
      unit: 'reqps',
      queries: [{ expr: `sum by (tool) (rate(toolgate_tool_retries_total[${R}]))`, legend: '{{tool}}' }],
    },
  ],
};

const reconciliation: DashboardSpec = {
  uid: 'toolgate-dlq',
  title: 'toolgate / Dead letters and reconciliation',
  description: 'Dead letters by reason, unresolved calls and the reconciliation cases they open.',
  tags: ['toolgate'],
  panels: [
    {
      title: 'Dead letters by reason',
      description: 'UNRESOLVED and EXHAUSTED are reconciled; POISON is a producer bug.',
      unit: 'short',
      stacked: true,
      queries: [
        {
          expr: `sum by (reason) (increase(toolgate_dead_letters_total[${R}]))`,
          legend: '{{reason}}',
        },
      ],
    },
    {
      title: 'Open cases by state',
      description: 'Unfinished reconciliation cases: open (status checks running), needs_manual (a person).',
      type: 'stat',
      unit: 'short',
      thresholds: [
        [null, 'green'],
        [1, 'orange'],
      ],
      queries: [{ expr: 'max by (state) (toolgate_reconciliation_cases)', legend: '{{state}}' }],
    },
    {
      title: 'Unresolved calls by tool',
      description: 'State-changing calls whose effect is unknown; each becomes a dead letter and a case.',
      unit: 'reqps',
      queries: [
        {
          expr: `sum by (tool) (rate(toolgate_tool_calls_total{outcome="UNRESOLVED"}[${R}]))`,
          legend: '{{tool}}',
        },
      ],
    },
    {
      title: 'Cases over time',
      description: 'Open and needs_manual cases; a line that never returns to zero is a stuck check.',
      unit: 'short',
      queries: [{ expr: 'max by (state) (toolgate_reconciliation_cases)', legend: '{{state}}' }],
    },
    {
      title: 'Oldest unfinished case age',
      description:
        'Age of the oldest open and needs_manual case. Open cases alert past 30 minutes; no line means none.',
      unit: 's',
      queries: [
        { expr: 'max by (state) (toolgate_reconciliation_oldest_case_age_seconds)', legend: '{{state}}' },
      ],
    },
    {
      title: 'Metrics sources failing',
      description: 'Scrapes in which breaker, case or lag gauges could not be read (their panels go blank).',
      unit: 'short',
      queries: [
        {
          // The counter has a series only once a source failed: 0 until then, not "No data".
          expr: `sum by (instance, source) (increase(toolgate_metrics_source_errors_total[${R}])) or on () vector(0)`,
          legend: '{{source}} @ {{instance}}',
        },
      ],
    },
  ],
};

const cost: DashboardSpec = {
  uid: 'toolgate-cost',
  title: 'toolgate / Cost',
  description: 'Tool calls per task and token equivalents: the early signs of a schema or prompt regression.',
  tags: ['toolgate'],
  panels: [
    {
      title: 'Tool calls per task',
      description: 'Median and p95 over completed tasks, as the agent backends report them.',
      unit: 'short',
      queries: [0.5, 0.95].map((q) => ({
        expr: `histogram_quantile(${q}, sum by (le) (rate(toolgate_task_tool_calls_bucket[${R}])))`,
        legend: `p${Math.round(q * 100)}`,
      })),
    },
    {
      title: 'Average tool calls per task',
      description: 'By how the task ended; a rising average is the first sign of a confusing schema.',
      unit: 'short',
      queries: [
        {
          expr:
            `sum by (status) (rate(toolgate_task_tool_calls_sum[${R}]))` +
            ` / sum by (status) (rate(toolgate_task_tool_calls_count[${R}]))`,
          legend: '{{status}}',
        },
      ],
    },
    {
      title: 'Token equivalents per second by tool',
      description: 'Arguments in plus results out; results stay in the context for every later round.',
      unit: 'short',
      stacked: true,
      queries: [{ expr: `sum by (tool) (rate(toolgate_tool_call_tokens_sum[${R}]))`, legend: '{{tool}}' }],
    },
    {
      title: 'Result tokens per call by tool',
      description: 'Average token equivalents a result adds to the conversation.',
      unit: 'short',
      queries: [
        {
          expr:
            `sum by (tool) (rate(toolgate_tool_call_tokens_sum{direction="out"}[${R}]))` +
            ` / sum by (tool) (rate(toolgate_tool_call_tokens_count{direction="out"}[${R}]))`,
          legend: '{{tool}}',
        },
      ],
    },
  ],
};

/** Every dashboard, in the order the provisioning folder lists them. */
const mcp: DashboardSpec = {
  uid: 'toolgate-mcp',
  title: 'toolgate / MCP gateway',
  description:
    'MCP requests by method and how they ended: tool calls answered, refused, unknown; clients turned away.',
  tags: ['toolgate'],
  panels: [
    {
      title: 'MCP requests by method',
      description: 'Requests per second the gateways answered, by JSON-RPC method.',
      unit: 'reqps',
      stacked: true,
      queries: [{ expr: `sum by (method) (rate(toolgate_mcp_requests_total[${R}]))`, legend: '{{method}}' }],
    },
    {
      title: 'tools/call by outcome',
      description:
        'tool-success and tool-duplicate answered; tool-refused and tool-failed are isError results; tool-unknown-outcome is reconciled, never failed; task-created was answered with a task handle (polled with tasks/get).',
      unit: 'reqps',
      stacked: true,
      queries: [
        {
          expr: `sum by (outcome) (rate(toolgate_mcp_requests_total{method="tools/call"}[${R}]))`,
          legend: '{{outcome}}',
        },
      ],
    },
    {
      title: 'Clients turned away',
      description:
        'Requests refused before any tool: no or bad token (unauthenticated), missing scope (forbidden), malformed (rejected).',
      unit: 'reqps',
      stacked: true,
      queries: [
        {
          expr: `sum by (outcome) (rate(toolgate_mcp_requests_total{outcome=~"unauthenticated|forbidden|rejected"}[${R}]))`,
          legend: '{{outcome}}',
        },
      ],
    },
    {
      title: 'MCP audit records lost',
      description:
        'Audit records of MCP requests a gateway gave up publishing after 30 s of retries: those requests are missing from the audit log (their log lines remain). Should stay at 0.',
      unit: 'ops',
      queries: [{ expr: `sum(rate(toolgate_mcp_audit_failures_total[${R}]))`, legend: 'lost' }],
    },
    {
      title: 'p95 request time by method',
      description: 'From the request to its finished response; tools/call includes the executor round trip.',
      unit: 's',
      queries: [
        {
          expr: `histogram_quantile(0.95, sum by (method, le) (rate(toolgate_mcp_request_duration_seconds_bucket[${R}])))`,
          legend: '{{method}}',
        },
      ],
    },
  ],
};

export const DASHBOARDS: readonly DashboardSpec[] = [overview, tool, downstreams, reconciliation, cost, mcp];

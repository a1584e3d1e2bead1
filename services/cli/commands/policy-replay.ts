import { readFile } from 'node:fs/promises';
import { basename, extname, resolve } from 'node:path';
import type { AuditRecord } from '../../../libs/core/audit-record.js';
import type { AggregateFact } from '../../../libs/core/aggregate-fact.js';
import type { PolicyEngine } from '../../../libs/pipeline/deps.js';
import { createPolicyEngine, type PolicySource } from '../../../libs/policy/policy-engine.js';
import { PolicyRulesError } from '../../../libs/policy/policy-rule.js';
import { replayPolicy, type ReplayReport, type RuleChanges } from '../../../libs/policy/replay.js';
import type { AuditStore } from '../../../libs/ports/audit-store.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { EXIT, UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command.js';
import { timeWindow, timeWindowOptions } from '../listing.js';
import { formatTable, type Column } from '../table.js';

/** Records read per audit query while replaying (the store's maximum). */
const PAGE = 10_000;

/** `policy replay`: what a candidate policy would have decided about past calls, executing nothing. */
export const policyReplayCommand: CommandSpec = {
  path: ['policy', 'replay'],
  summary: 'Which past decisions a candidate policy would change (runs nothing).',
  details: [
    'Reads the executors\u2019 audit records (oldest first, --from/--to, --tenant), and for every call the business rules judged evaluates the candidate with what the record holds: the tool at its recorded version, the allow-listed arguments, the tenant, the principal\u2019s roles and the aggregate facts as the rules saw them. Prints, per rule, the decisions that change (allowed \u2192 refused, refused \u2192 allowed, refused by another rule) with counts and examples, and the calls it could not judge (an argument outside the audit allow-list, a fact the record lacks). Nothing is executed or written.',
    'The candidate is a Cedar file (its facts are the catalog policy\u2019s) or a JSON file with {version, cedar?, rules?, facts?}. It is checked against the catalog\u2019s tools exactly as the executor checks a policy at start: a policy that does not load is an error naming the line.',
  ],
  positionals: [],
  options: {
    policy: {
      type: 'string',
      valueName: 'file',
      required: true,
      description: 'The candidate policy: .cedar text, or .json {version, cedar?, rules?, facts?}.',
    },
    'candidate-version': {
      type: 'string',
      valueName: 'name',
      description: 'The candidate\u2019s version for a .cedar file.',
      defaultText: 'candidate:<file name>',
    },
    tenant: { type: 'string', valueName: 'id', description: 'Only this tenant\u2019s calls.' },
    ...timeWindowOptions('Calls'),
    catalog: {
      type: 'string',
      valueName: 'module',
      description: 'Catalog module (relative to the working directory, or a package).',
      defaultText: '$TOOLGATE_CATALOG_MODULE, else the store catalog',
    },
  },
  needs: ['postgres'],
  examples: [
    'toolgate policy replay --policy ./policies/refunds-2026-12.cedar --from 2026-11-25',
    'toolgate policy replay --policy candidate.json --tenant t1 --json',
  ],
  async run({ args, out, resources, io }) {
    const { fromMs, toMs } = timeWindow(args);
    const catalog = await resources.catalog();
    const tools = catalog.registry.definitions();
    const file = resolve(io.cwd ?? process.cwd(), args.string('policy')!);
    const candidate = await loadCandidate(file, args.string('candidate-version'), catalog.policy, tools);
    const store = await resources.auditStore();
    const records = await readExecutorRecords(store, {
      ...(args.string('tenant') === undefined ? {} : { tenant: args.string('tenant')! }),
      ...(fromMs === undefined ? {} : { fromMs }),
      ...(toMs === undefined ? {} : { toMs }),
    });
    const report = replayPolicy(records, candidate, catalog.registry);
    out.json(report);
    out.text(formatReport(report));
    return EXIT.ok;
  },
};

async function loadCandidate(
  file: string,
  version: string | undefined,
  active: PolicyEngine,
  tools: readonly ToolDefinition[],
): Promise<PolicyEngine> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read --policy ${file}: ${(err as Error).message}`, 'policy replay');
  }
  let source: PolicySource;
  if (extname(file) === '.json') {
    try {
      source = JSON.parse(text) as PolicySource;
    } catch (err) {
      throw new UsageError(`--policy ${file} is not JSON: ${(err as Error).message}`, 'policy replay');
    }
  } else {
    source = {
      version: version ?? `candidate:${basename(file)}`,
      cedar: text,
      facts: activeFacts(active, tools),
    };
  }
  try {
    return createPolicyEngine(source, tools);
  } catch (err) {
    if (err instanceof PolicyRulesError) {
      throw new UsageError(`the candidate policy does not load. ${err.message}`, 'policy replay');
    }
    throw err;
  }
}

/** The facts the catalog's policy declares, over all its tools, each once. */
function activeFacts(active: PolicyEngine, tools: readonly ToolDefinition[]): AggregateFact[] {
  const byName = new Map<string, AggregateFact>();
  for (const tool of tools) for (const fact of active.factsOf(tool.name)) byName.set(fact.name, fact);
  return [...byName.values()];
}

/** Every executor record of the window, oldest first, page by page. */
async function readExecutorRecords(
  store: AuditStore,
  filter: { tenant?: string; fromMs?: number; toMs?: number },
): Promise<AuditRecord[]> {
  const out: AuditRecord[] = [];
  const seen = new Set<string>();
  let fromMs = filter.fromMs;
  for (;;) {
    const page = await store.query({
      ...filter,
      ...(fromMs === undefined ? {} : { fromMs }),
      source: 'executor',
      limit: PAGE,
      order: 'asc',
    });
    let added = 0;
    for (const row of page) {
      const id = `${row.chain}:${row.seq}`;
      if (seen.has(id)) continue;
      seen.add(id);
      out.push(row.record);
      added += 1;
    }
    if (page.length < PAGE) return out;
    const last = page.at(-1)!.recordedAtMs;
    if (added === 0) {
      // A whole page recorded within one millisecond: step past it rather than loop.
      fromMs = last + 1;
    } else fromMs = last;
  }
}

const CHANGE_COLUMNS: readonly Column[] = [
  { header: 'RULE', maxWidth: 40 },
  { header: 'CALLS' },
  { header: 'EXAMPLE CALL', maxWidth: 40 },
  { header: 'TOOL', maxWidth: 32 },
  { header: 'ARGUMENTS', maxWidth: 60 },
  { header: 'FACTS', maxWidth: 60 },
];

function formatReport(report: ReplayReport): string {
  const lines = [
    `Candidate ${report.candidateVersion} over ${report.judged} judged call${report.judged === 1 ? '' : 's'} ` +
      `(${report.records} audit record${report.records === 1 ? '' : 's'} read; recorded under ${
        Object.entries(report.recordedVersions)
          .map(([v, n]) => `${v} \u00d7${n}`)
          .join(', ') || 'no policy'
      }).`,
    `Unchanged: ${report.unchanged}.`,
  ];
  const section = (title: string, changes: readonly RuleChanges[]) => {
    if (changes.length === 0) return;
    lines.push('', `${title}:`);
    lines.push(
      formatTable(
        CHANGE_COLUMNS,
        changes.flatMap((c) =>
          c.examples.map((e) => [
            c.ruleId,
            String(c.count),
            e.callId,
            e.tool,
            JSON.stringify(e.arguments),
            JSON.stringify(e.facts),
          ]),
        ),
      ).trimEnd(),
    );
  };
  section('Allowed then, refused by the candidate', report.newlyRefused);
  section('Refused then, allowed by the candidate', report.newlyAllowed);
  section('Refused by both, by another rule', report.refusedByAnotherRule);
  section('Not evaluable from the audit record', report.notEvaluable);
  if (report.newlyRefused.length + report.newlyAllowed.length + report.refusedByAnotherRule.length === 0) {
    lines.push('', 'The candidate changes no decision.');
  }
  return lines.join('\n');
}

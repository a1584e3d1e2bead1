import { comparisonTable } from './comparison-table.js';
import { loadRecordings, loadRequests, type LabelledRequest, type Recording } from './eval-data.js';
import type { AskModel } from './live-model.js';
import { toolSpecs, type SchemaVariant } from './schema-variants.js';
import { scoreVariant, type ScoringOptions, type VariantScore } from './scoring.js';

/** A finished eval: one score per variant and the comparison table. */
export interface EvalReport {
  readonly scores: readonly VariantScore[];
  readonly table: string;
}

/** Orders variants weakest first when they are known ones, then by name. */
const ORDER: Readonly<Record<string, number>> = { bare: 0, 'one-line': 1, described: 2 };

/** Scores already-loaded recordings; rows ordered bare, one-line, described, then others by name. */
export function scoreRecordings(
  requests: readonly LabelledRequest[],
  recordings: readonly Recording[],
  options: ScoringOptions = {},
): EvalReport {
  const sorted = [...recordings].sort(
    (a, b) => (ORDER[a.variant] ?? 99) - (ORDER[b.variant] ?? 99) || a.variant.localeCompare(b.variant),
  );
  const scores = sorted.map((r) => scoreVariant(requests, r, options));
  return { scores, table: comparisonTable(scores) };
}

/** The offline eval: reads the labelled set and every recording in `recordedDir`; no network. */
export async function runOfflineEval(paths: {
  readonly requests: string;
  readonly recordedDir: string;
}): Promise<EvalReport> {
  const [requests, recordings] = await Promise.all([
    loadRequests(paths.requests),
    loadRecordings(paths.recordedDir),
  ]);
  if (recordings.length === 0) throw new Error(`no recordings (*.json) in ${paths.recordedDir}`);
  return scoreRecordings(requests, recordings);
}

/**
 * Asks a live model every request under each variant's schemas, one request at a time, and returns
 * the recordings (same format as the offline ones, so they can be saved and replayed).
 */
export async function recordLive(
  requests: readonly LabelledRequest[],
  variants: readonly SchemaVariant[],
  ask: AskModel,
  source: string,
  progress: (line: string) => void = () => undefined,
): Promise<Recording[]> {
  const recordings: Recording[] = [];
  for (const variant of variants) {
    const tools = toolSpecs(variant);
    const answers = [];
    for (const r of requests) {
      answers.push(await ask(r.id, r.request, tools));
      progress(`${variant} ${r.id}`);
    }
    recordings.push({ variant, schemas: `store tools, ${variant} variant`, source, answers });
  }
  return recordings;
}

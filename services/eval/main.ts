import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { missLines } from './comparison-table.js';
import { loadEvalConfig } from './config.js';
import { loadRequests } from './eval-data.js';
import { liveModel, type LiveTarget } from './live-model.js';
import { recordLive, runOfflineEval, scoreRecordings } from './run-eval.js';
import { SCHEMA_VARIANTS, type SchemaVariant } from './schema-variants.js';

const USAGE = `npm run eval [-- options]
  (no options)         score the recorded answers in test/fixtures/eval/recorded (offline)
  --misses             also list each variant's misses
  --live               ask a real model (needs OPENAI_API_KEY or ANTHROPIC_API_KEY; never in CI)
  --provider <p>       openai | anthropic (default: whichever key is set, openai first)
  --variants <a,b>     variants for --live (default: ${SCHEMA_VARIANTS.join(',')})
  --out <dir>          with --live: save the recordings there
  --requests <file>    labelled requests (default test/fixtures/eval/requests.json)
  --recorded <dir>     recordings to score offline (default test/fixtures/eval/recorded)`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      live: { type: 'boolean', default: false },
      misses: { type: 'boolean', default: false },
      provider: { type: 'string' },
      variants: { type: 'string' },
      out: { type: 'string' },
      requests: { type: 'string', default: 'test/fixtures/eval/requests.json' },
      recorded: { type: 'string', default: 'test/fixtures/eval/recorded' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values.live) {
    const report = await runOfflineEval({ requests: values.requests, recordedDir: values.recorded });
    console.log(`Schema-quality eval, offline: recorded answers from ${values.recorded}`);
    console.log(
      '(the committed recordings are HAND-WRITTEN stand-ins, not real model outputs; use --live to measure a model)\n',
    );
    console.log(report.table);
    if (values.misses)
      for (const s of report.scores) console.log(`\n${s.variant}:\n  ${missLines(s).join('\n  ')}`);
    return 0;
  }

  const target = liveTarget(values.provider);
  if (typeof target === 'string') {
    console.error(target);
    return 2;
  }
  const variants = (values.variants ?? SCHEMA_VARIANTS.join(',')).split(',') as SchemaVariant[];
  const unknown = variants.filter((v) => !(SCHEMA_VARIANTS as readonly string[]).includes(v));
  if (unknown.length > 0) {
    console.error(`unknown variant(s): ${unknown.join(', ')}; known: ${SCHEMA_VARIANTS.join(', ')}`);
    return 2;
  }
  const requests = await loadRequests(values.requests);
  console.log(
    `Schema-quality eval, live: ${target.provider} ${target.model}, ${requests.length} requests × ${variants.length} variant(s)`,
  );
  const source = `recorded live from ${target.provider} ${target.model} on ${new Date().toISOString()}`;
  const recordings = await recordLive(requests, variants, await liveModel(target), source, (line) =>
    process.stderr.write(`\r${line}   `),
  );
  process.stderr.write('\n');
  if (values.out !== undefined) {
    await mkdir(values.out, { recursive: true });
    for (const r of recordings)
      await writeFile(join(values.out, `${r.variant}.json`), `${JSON.stringify(r, null, 2)}\n`);
    console.log(`recordings saved in ${values.out}`);
  }
  const report = scoreRecordings(requests, recordings);
  console.log(`\n${report.table}`);
  if (values.misses)
    for (const s of report.scores) console.log(`\n${s.variant}:\n  ${missLines(s).join('\n  ')}`);
  return 0;
}

function liveTarget(provider: string | undefined): LiveTarget | string {
  const config = loadEvalConfig();
  if (provider !== undefined && provider !== 'openai' && provider !== 'anthropic') {
    return `--provider must be openai or anthropic, not ${provider}`;
  }
  const wantOpenAI = provider === 'openai' || (provider === undefined && config.openaiApiKey !== undefined);
  if (wantOpenAI && config.openaiApiKey !== undefined) {
    return { provider: 'openai', model: config.openaiModel, apiKey: config.openaiApiKey };
  }
  if (provider !== 'openai' && config.anthropicApiKey !== undefined) {
    return { provider: 'anthropic', model: config.anthropicModel, apiKey: config.anthropicApiKey };
  }
  const need =
    provider === undefined
      ? 'OPENAI_API_KEY or ANTHROPIC_API_KEY'
      : provider === 'openai'
        ? 'OPENAI_API_KEY'
        : 'ANTHROPIC_API_KEY';
  return `--live calls a real model and needs ${need} in the environment; none is set. Without --live, npm run eval scores the recorded answers offline.`;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  },
);

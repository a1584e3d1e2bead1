import { mkdtemp, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { offlineTestFile } from '../../helpers/offline.js';
import { loadEvalConfig } from '../../../services/eval/config.js';
import { loadRecordings, loadRequests } from '../../../services/eval/eval-data.js';
import { recordLive, runOfflineEval } from '../../../services/eval/run-eval.js';
import { EVAL_TOOLS, toolSpecs } from '../../../services/eval/schema-variants.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures/eval');
const paths = { requests: join(FIXTURES, 'requests.json'), recordedDir: join(FIXTURES, 'recorded') };

const guard = offlineTestFile();

describe('the labelled set and its recordings', () => {
  it('has about 30 requests, each naming one of the store tools', async () => {
    const requests = await loadRequests(paths.requests);
    expect(requests.length).toBeGreaterThanOrEqual(30);
    for (const r of requests) expect(EVAL_TOOLS).toContain(r.expected.tool);
  });

  it('every recording answers every request once and says it is hand-written', async () => {
    const requests = await loadRequests(paths.requests);
    const recordings = await loadRecordings(paths.recordedDir);
    expect(recordings.map((r) => r.variant).sort()).toEqual(['bare', 'described', 'one-line']);
    for (const r of recordings) {
      expect(r.answers.map((a) => a.id).sort()).toEqual(requests.map((q) => q.id).sort());
      expect(r.source).toMatch(/^HAND-WRITTEN STAND-INS, NOT REAL MODEL OUTPUTS/);
    }
  });
});

describe('the offline run', () => {
  it('prints one row per variant, weakest schema first, with figures consistent with the scores', async () => {
    const report = await runOfflineEval(paths);
    expect(report.scores.map((s) => s.variant)).toEqual(['bare', 'one-line', 'described']);
    const lines = report.table.split('\n');
    expect(lines[0]).toMatch(/^variant\s+tool selection\s+argument fields/);
    for (const [i, s] of report.scores.entries()) {
      expect(lines[i + 2]).toContain(`(${s.toolCorrect}/${s.requests})`);
      expect(lines[i + 2]).toContain(`(${s.fieldsMatched}/${s.fieldsExpected})`);
    }
    expect(guard().refused).toEqual([]);
  });

  it('fails loudly on a recording that does not match the format', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'eval-'));
    await mkdir(join(dir, 'recorded'));
    await writeFile(
      join(dir, 'recorded', 'broken.json'),
      JSON.stringify({ variant: 'x', answers: [{ id: 'r01' }] }),
    );
    await expect(
      runOfflineEval({ requests: paths.requests, recordedDir: join(dir, 'recorded') }),
    ).rejects.toThrow(/broken\.json:\n {2}schemas: /);
  });
});

describe('schema variants and the live recorder (with a scripted model)', () => {
  it('bare drops every description and enum, one-line keeps enums, described is the catalog export', () => {
    const refund = (v: 'bare' | 'one-line' | 'described') =>
      toolSpecs(v).find((t) => t.name === 'issue_refund')!;
    const text = (v: 'bare' | 'one-line' | 'described') => JSON.stringify(refund(v));
    expect(refund('bare').description).toBeUndefined();
    expect(text('bare')).not.toContain('description');
    expect(text('bare')).not.toContain('enum');
    expect(text('one-line')).toContain('"enum"');
    expect(JSON.stringify(refund('one-line').parameters)).not.toContain('description');
    expect(refund('one-line').description).toBe(
      'Send money back to the original payment method for part or all of one order.',
    );
    expect(JSON.stringify(refund('described').parameters)).toContain(
      'Support assistants may refund at most 50.00',
    );
    expect(
      toolSpecs('described')
        .map((t) => t.name)
        .sort(),
    ).toEqual([...EVAL_TOOLS].sort());
  });

  it('records one answer per request per variant, in the offline format', async () => {
    const requests = (await loadRequests(paths.requests)).slice(0, 3);
    const seen: string[] = [];
    const recordings = await recordLive(
      requests,
      ['bare', 'described'],
      (id, _request, tools) => {
        seen.push(`${tools.length}:${tools[0]!.description === undefined ? 'bare' : 'described'}:${id}`);
        return Promise.resolve({ id, tool: null, text: 'no' });
      },
      'scripted',
    );
    expect(recordings.map((r) => [r.variant, r.answers.length])).toEqual([
      ['bare', 3],
      ['described', 3],
    ]);
    expect(seen[0]).toBe(`6:bare:${requests[0]!.id}`);
    expect(seen[3]).toBe(`6:described:${requests[0]!.id}`);
  });

  it('reads keys only from the environment given, treating empty as unset', () => {
    expect(loadEvalConfig({ OPENAI_API_KEY: '' })).toEqual({
      openaiModel: 'gpt-4o-mini',
      anthropicModel: 'claude-haiku-4-5',
    });
    expect(loadEvalConfig({ ANTHROPIC_API_KEY: 'k', TOOLGATE_EVAL_ANTHROPIC_MODEL: 'm' })).toMatchObject({
      anthropicApiKey: 'k',
      anthropicModel: 'm',
    });
  });
});

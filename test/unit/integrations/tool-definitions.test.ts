import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../libs/core/system-clock.js';
import { ConfinedFs } from '../../../libs/integrations/confined-fs.js';
import { MemorySubmissionLedger } from '../../../libs/integrations/submission-ledger.js';
import {
  checkAnthropicTool,
  checkOpenAIStrictTool,
  toAnthropicTools,
  toOpenAITools,
} from '../../../libs/registry/index.js';
import { inputJsonSchema } from '../../../libs/registry/input-json-schema.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { readDocumentTool } from '../../../services/catalog/tools/read-document.js';
import { runReportQueryTool } from '../../../services/catalog/tools/run-report-query.js';
import { submitFilingTool } from '../../../services/catalog/tools/submit-filing.js';
import { LegacyFilingClient } from '../../../services/legacy-filing/client.js';
import { ctxFor } from '../../helpers/tool-calls.js';

const dir = mkdtempSync(join(tmpdir(), 'tg-tooldefs-'));
let tools: ToolDefinition[];
// Never connected: the definitions are inspected, not run.
const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });

beforeAll(async () => {
  tools = [
    submitFilingTool({
      client: new LegacyFilingClient({ baseUrl: 'http://127.0.0.1:1', clock: systemClock, timeoutMs: 1_000 }),
      ledger: new MemorySubmissionLedger(systemClock),
      clock: systemClock,
    }),
    readDocumentTool({ documents: await ConfinedFs.create(dir, { maxBytes: 1_024 }) }),
    runReportQueryTool({ pool }),
  ] as unknown as ToolDefinition[];
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await pool.end();
});

const ctx = ctxFor({ id: 'u', tenant: 't1', kind: 'user', scopes: [], roles: [] }, { taskId: 'task' });

describe('integration tools: definitions', () => {
  it('pass the OpenAI strict-mode and Anthropic rules', () => {
    for (const tool of toOpenAITools(tools, { strict: true })) {
      expect([tool.function.name, checkOpenAIStrictTool(tool)]).toEqual([tool.function.name, []]);
    }
    for (const tool of toAnthropicTools(tools))
      expect([tool.name, checkAnthropicTool(tool)]).toEqual([tool.name, []]);
  });

  it('submit_filing is a status-checked, destructive call serialized per return, timed to outlast one send', () => {
    const filing = tools[0]!;
    expect(filing).toMatchObject({
      name: 'submit_filing',
      stateChanging: true,
      destructive: true,
      downstream: 'legacy-filing',
      retrySafety: { kind: 'status-check' },
      retry: { maxAttempts: 2 },
      auditFields: ['filer_id', 'form_type', 'period', 'amount'],
    });
    // The longer of one send (5 s to its deadline + 0.5 s margin) and one lookup (2 s), + 1 s.
    expect(filing.timeoutMs).toBe(5_000 + 500 + 1_000);
    expect(
      filing.conflictKey!(
        { filer_id: '123456789', filer_name: 'A', form_type: 'vat_return', period: '2025-Q1', amount: 1 },
        ctx,
      ),
    ).toBe('t1:filing:123456789:vat_return:2025-Q1');
  });

  it('read_document and run_report_query are read-only', () => {
    for (const tool of tools.slice(1)) {
      expect(tool).toMatchObject({
        stateChanging: false,
        destructive: false,
        retrySafety: { kind: 'read-only' },
      });
    }
  });

  it('run_report_query takes a query name from a closed set plus that query’s typed parameters, nothing else', async () => {
    const report = tools[2]!;
    const accepts = async (query: Record<string, unknown>) =>
      (await report.input.safeParseAsync({ report: query })).success;
    for (const query of [
      { query: 'filings_for_period', period: '2025-Q1', limit: 10 },
      { query: 'filer_history', filer_id: '123456789', limit: 5 },
    ]) {
      expect([query, await accepts(query)]).toEqual([query, true]);
    }
    // Not a known query; SQL in place of a name; a parameter of another query; a wrong type; too many rows.
    for (const query of [
      { query: 'drop_everything', period: '2025-Q1' },
      { query: 'SELECT * FROM legacy_filings', limit: 1 },
      { query: 'totals_by_form', period: '2025-Q1', filer_id: '123456789' },
      { query: 'filer_history', filer_id: "1' OR '1'='1", limit: 5 },
      { query: 'filings_for_period', period: '2025-Q1', limit: 1000 },
    ]) {
      expect([query, await accepts(query)]).toEqual([query, false]);
    }
    const schema = JSON.stringify(inputJsonSchema(report));
    for (const name of ['filings_for_period', 'filer_history', 'filers_by_name', 'totals_by_form']) {
      expect(schema).toContain(name);
    }
  });

  it('read_document and submit_filing describe their constraints to the model', () => {
    const doc = inputJsonSchema(tools[1]!) as { properties: Record<string, { description: string }> };
    expect(doc.properties.path!.description).toMatch(/relative/);
    const filing = inputJsonSchema(tools[0]!) as {
      properties: Record<string, { description?: string; enum?: unknown[] }>;
    };
    expect(filing.properties.form_type!.enum).toEqual(['vat_return', 'payroll_annual', 'corporate_tax']);
    expect(filing.properties.period!.description).toMatch(/2025-Q3/);
    expect(tools[0]!.description).toMatch(/do NOT call it again/);
  });
});

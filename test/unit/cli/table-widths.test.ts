import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryAuditStore } from '../../../libs/adapters/memory/index.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import { loadCliConfig } from '../../../services/cli/config.js';
import { DEFAULT_OUTPUT_WIDTH, outputWidth } from '../../../services/cli/io.js';
import { formatFields, formatTable, withOutputWidth, type Column } from '../../../services/cli/table.js';
import { auditRecord, envelope, policyRefusedRecord } from '../audit/fixtures.js';
import { cli } from './capture.js';
import { dlqFixture, type DlqFixture } from './dlq-fixture.js';

/**
 * Tables fit the terminal: every line of every table-producing command stays within COLUMNS at
 * 60, 80, 100 and 200 columns with long realistic values, ids stay whole, and --json is unchanged.
 */
const WIDTHS = [60, 80, 100, 200] as const;

const longLines = (text: string, width: number): string[] => text.split('\n').filter((l) => l.length > width);

describe('formatTable at a width', () => {
  const columns: Column[] = [{ header: 'CASE' }, { header: 'NOTE' }, { header: 'TOOL' }, { header: 'TIME' }];
  const caseId = 'a3c1e0f2-5b7d-4e8a-9c6b-0d1e2f3a4b5c';
  const row = [caseId, 'n'.repeat(50), 't'.repeat(20), '2025-03-01T12:00:00.000Z'];

  it('is unchanged when it fits, and with no width given', () => {
    const natural = formatTable(columns, [row]);
    expect(formatTable(columns, [row], { width: 200 })).toBe(natural);
    expect(natural.split('\n')[2]).toBe(row.join('  '));
  });

  it('shrinks the widest free-text column first and cuts its cells with an ellipsis', () => {
    // Natural: 36 + 50 + 20 + 24 + 6 separators = 136; 20 over.
    const lines = formatTable(columns, [row], { width: 116 }).split('\n');
    expect(lines[2]).toBe(`${caseId}  ${'n'.repeat(29)}…  ${'t'.repeat(20)}  2025-03-01T12:00:00.000Z`);
    expect(lines[2]!.length).toBe(116);
  });

  it('shrinks the next widest once the two are level, keeping ids and times whole', () => {
    // 50 over: NOTE goes down to 20 (30 off), then NOTE and TOOL take turns: 10 each.
    const lines = formatTable(columns, [row], { width: 86 }).split('\n');
    expect(lines[2]).toBe(`${caseId}  ${'n'.repeat(9)}…  ${'t'.repeat(9)}…  2025-03-01T12:00:00.000Z`);
    expect(lines.every((l) => l.length <= 86)).toBe(true);
  });

  it('prints one block per row when the ids and fixed values do not fit whole', () => {
    const other = [randomUUID(), 'short', 'tool', '2025-03-01T12:00:01.000Z'];
    const text = formatTable(columns, [row, other], { width: 60 });
    expect(text).toBe(
      [
        `CASE  ${caseId}`,
        `NOTE  ${'n'.repeat(50)}`,
        `TOOL  ${'t'.repeat(20)}`,
        'TIME  2025-03-01T12:00:00.000Z',
        '',
        `CASE  ${other[0]}`,
        'NOTE  short',
        'TOOL  tool',
        'TIME  2025-03-01T12:00:01.000Z',
        '',
      ].join('\n'),
    );
    const narrow = formatTable(columns, [row], { width: 30 });
    expect(longLines(narrow, 30)).toEqual([]);
    expect(narrow).toContain(`NOTE  ${'n'.repeat(23)}…\n`);
    // An id longer than the room is broken over lines, never cut: every character is there.
    expect(narrow).toContain(`CASE  ${caseId.slice(0, 24)}\n      ${caseId.slice(24)}\n`);
  });

  it('never cuts an id column, even one with a maxWidth', () => {
    const callId = `call-${'x'.repeat(60)}`;
    const text = formatTable([{ header: 'CALL', maxWidth: 40 }, { header: 'REASON' }], [[callId, 'r']], {
      width: 200,
    });
    expect(text).toContain(callId);
  });

  it('takes the width of the run in progress; concurrent runs keep their own', async () => {
    const table = async (width: number): Promise<string> =>
      withOutputWidth(width, async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return formatTable(columns, [row]);
      });
    const [wide, narrow] = await Promise.all([table(200), table(80)]);
    expect(wide).toBe(formatTable(columns, [row]));
    expect(narrow).toBe(formatTable(columns, [row], { width: 80 }));
    expect(wide).not.toBe(narrow);
  });
});

describe('formatFields at a width', () => {
  it('wraps a long value at spaces under its label, losing nothing', () => {
    const note = 'the payment provider answered 504 twice, then the ledger showed the refund';
    const text = formatFields(
      [
        ['case', 'c-1'],
        ['note', note],
      ],
      { width: 40 },
    );
    expect(longLines(text, 40)).toEqual([]);
    const noteLines = text.split('\n').slice(1, -1);
    expect(noteLines[0]!.startsWith('note:  ')).toBe(true);
    expect(noteLines.slice(1).every((l) => l.startsWith('       '))).toBe(true);
    expect(noteLines.map((l) => l.slice(7)).join(' ')).toBe(note);
  });
});

describe('outputWidth', () => {
  const sink = (tty: boolean, columns?: number) => ({ write: () => undefined, isTTY: tty, columns });
  const env = (columns?: string) => loadCliConfig(columns === undefined ? {} : { COLUMNS: columns });

  it('is COLUMNS, else the terminal width, else 100', () => {
    expect(outputWidth(sink(true, 132), env('72'))).toBe(72);
    expect(outputWidth(sink(true, 132), env())).toBe(132);
    expect(outputWidth(sink(false, 132), env())).toBe(DEFAULT_OUTPUT_WIDTH);
    expect(outputWidth(sink(true, 132), env('wide'))).toBe(132);
    expect(outputWidth(sink(false), env('0'))).toBe(100);
  });
});

describe('commands fit COLUMNS', () => {
  const callIds = [randomUUID(), randomUUID(), randomUUID()];
  const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
  let store: MemoryAuditStore;
  let f: DlqFixture;

  beforeEach(async () => {
    store = new MemoryAuditStore();
    const principal = 'agent:support-bot-production-eu-west-1';
    const resource = 'tenant-acme-industries:order:O-5512-2025-03-01-replacement-shipment';
    await store.append([
      envelope(
        auditRecord({
          tenant: 'tenant-acme-industries',
          principalId: principal,
          tool: 'issue_refund_for_damaged_goods',
          callId: callIds[0]!,
          resourceKey: resource,
          traceId: trace,
        }),
        { recordedAtMs: Date.UTC(2025, 2, 1, 12) },
      ),
      envelope(
        policyRefusedRecord(
          'refund of $1,250.00 is over the $500.00 limit for agents without the refunds:large scope; ask a person',
          {
            tenant: 'tenant-acme-industries',
            principalId: 'agent:billing-assistant-staging',
            tool: 'issue_refund_for_damaged_goods',
            callId: callIds[1]!,
            resourceKey: resource,
          },
        ),
        { recordedAtMs: Date.UTC(2025, 2, 1, 12, 5) },
      ),
    ]);
    f = await dlqFixture();
    const c = await f.open({
      callId: callIds[2]!,
      tool: 'issue_refund_for_damaged_goods',
      tenant: 'tenant-acme-industries',
      resourceKey: resource,
    });
    await f.cases.transition(
      c.caseId,
      {
        to: 'needs_manual',
        by: 'status-check',
        note: 'the payment provider answered 504 Gateway Timeout to every status check for 30 minutes; a person has to look at the ledger',
      },
      'open',
    );
  });
  afterEach(async () => {
    await f.close();
  });

  const run = (argv: string[], columns: number) =>
    cli(argv, {
      stores: { audit: store },
      operations: f.ops,
      clock: f.clock,
      env: { COLUMNS: String(columns) },
    });

  const commands = (caseId: string): string[][] => [
    ['dlq', 'list'],
    ['dlq', 'show', caseId],
    ['audit', 'query', '--tenant', 'tenant-acme-industries'],
    ['audit', 'who', 'O-5512-2025-03-01-replacement-shipment', '--tool', 'issue_refund_for_damaged_goods'],
    ['audit', 'verify'],
  ];

  for (const width of WIDTHS) {
    it(`keeps every line within ${width} columns and every id whole`, async () => {
      const [c] = await f.cases.list({});
      const caseId = c!.caseId;
      for (const argv of commands(caseId)) {
        const r = await run(argv, width);
        expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(EXIT.ok);
        expect(r.stdout.split('\n').length, argv.join(' ')).toBeGreaterThan(3);
        // Not tables nor field lists, so not fitted here: dlq show's closing "Next:" section
        // (commands to copy, from dlq-format.ts), audit who's group headings (audit-who.ts) and
        // audit verify's closing advice (audit-verify.ts).
        const lines = longLines(r.stdout.split('\nNext: ')[0]!, width).filter(
          (l) => !/^(DID|TRIED) \(\d+\): /.test(l) && !l.startsWith('Keep these heads outside'),
        );
        expect(lines, `${argv.join(' ')} at ${width}:\n${r.stdout}`).toEqual([]);
      }
      const list = await run(['dlq', 'list'], width);
      expect(list.stdout).toContain(caseId);
      const query = await run(['audit', 'query', '--tenant', 'tenant-acme-industries'], width);
      expect(query.stdout).toContain(trace);
      const who = await run(
        [
          'audit',
          'who',
          'O-5512-2025-03-01-replacement-shipment',
          '--tool',
          'issue_refund_for_damaged_goods',
        ],
        width,
      );
      for (const id of callIds.slice(0, 2)) expect(who.stdout).toContain(id);
    });
  }

  it('shows whole values at 200 columns where they fit, and cuts only free text at 100', async () => {
    const wide = await run(['audit', 'query', '--tenant', 'tenant-acme-industries'], 400);
    expect(wide.stdout).toContain('issue_refund_for_damaged_goods');
    const narrow = await run(['audit', 'query', '--tenant', 'tenant-acme-industries'], 100);
    expect(narrow.stdout).toContain('…');
    expect(narrow.stdout).toContain('2025-03-01T12:05:00.000Z');
  });

  it('leaves --json alone at any width', async () => {
    const [c] = await f.cases.list({});
    for (const argv of commands(c!.caseId)) {
      const outputs = await Promise.all(WIDTHS.map((w) => run([...argv, '--json'], w)));
      for (const o of outputs) expect(o.stdout).toBe(outputs[0]!.stdout);
      expect(outputs[0]!.stdout).not.toContain('…');
    }
  });
});

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import type { ChainAnchor, VerifyReport } from '../../../libs/ports/audit-store.js';
import { EXIT, UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command.js';
import { optional } from '../optional.js';
import { formatTable } from '../table.js';

const Hash = z.string().regex(/^[0-9a-f]{64}$/, 'a 64-character hex hash');
const Seq = z.number().int().positive();
/** An anchors file: a list of anchors, or the `--json` output of an earlier ok verify (its heads). */
const AnchorsFile = z.union([
  z.array(z.object({ chain: z.string().min(1), seq: Seq, hash: Hash })),
  z.object({ heads: z.record(z.string(), z.object({ seq: Seq, hash: Hash })) }),
]);

/** `audit verify`: re-computes every hash link and reports the first broken one (exit 1). */
export const auditVerifyCommand: CommandSpec = {
  path: ['audit', 'verify'],
  summary: 'Re-compute the audit hash chains; exit 1 naming the first broken link.',
  details: [
    'Each tenant has one chain. Every record is re-hashed and checked against its predecessor, its seq and its indexed columns; the first record that does not hold is reported with its chain, seq and reason, and the command exits 1. Progress (records checked) goes to stderr.',
    'A chain that was rewritten from some record to its end, or lost its newest records, is consistent in itself: keep the heads an ok run prints (its --json output) outside the database and pass them back with --anchors to catch that.',
  ],
  positionals: [],
  options: {
    chain: { type: 'string', valueName: 'tenant', description: 'Verify only this chain (tenant).' },
    anchors: {
      type: 'string',
      valueName: 'file',
      description:
        "Heads kept from an earlier run: that run's --json output, or a list of {chain, seq, hash}.",
    },
    'progress-every': {
      type: 'string',
      valueName: 'n',
      description: 'Report progress on stderr every n records (0: never).',
      defaultText: '10000',
    },
  },
  needs: ['postgres'],
  examples: [
    'toolgate audit verify',
    'toolgate audit verify --chain t1',
    'toolgate audit verify --json > heads.json; toolgate audit verify --anchors heads.json',
  ],
  async run({ args, out, resources, io }) {
    const every = args.int('progress-every', { min: 0, max: Number.MAX_SAFE_INTEGER }, 10_000)!;
    const anchorsPath = args.string('anchors');
    const anchors =
      anchorsPath === undefined
        ? undefined
        : readAnchors(resolve(io.cwd ?? process.cwd(), anchorsPath), args.command);
    const store = await resources.auditStore();
    let nextReport = every;
    const report: VerifyReport = await store.verify({
      ...optional('chain', args.string('chain')),
      ...optional('anchors', anchors),
      onProgress: ({ chain, checked }) => {
        if (every === 0 || checked < nextReport) return;
        out.note(`verify: ${checked} records checked (chain ${chain})`);
        nextReport = (Math.floor(checked / every) + 1) * every;
      },
    });
    out.json(report);
    if (!report.ok) {
      out.text(
        `BROKEN: chain ${report.chain}, seq ${report.firstBrokenSeq}: ${report.reason} — ${report.detail}\n` +
          `${report.checked} records checked, up to and including the broken one.`,
      );
      return EXIT.failure;
    }
    const heads = Object.entries(report.heads);
    out.text(
      `OK: ${report.checked} record${report.checked === 1 ? '' : 's'} in ${heads.length} chain${heads.length === 1 ? '' : 's'} verified; every link holds.`,
    );
    if (heads.length > 0) {
      out.text(
        formatTable(
          [
            { header: 'CHAIN', maxWidth: 60 },
            { header: 'HEAD SEQ', align: 'right' },
            { header: 'HEAD HASH' },
          ],
          heads.map(([chain, h]) => [chain, h.seq, h.hash]),
        ),
      );
      out.text('Keep these heads outside the database (--json) and pass them back with --anchors next time.');
    }
    return EXIT.ok;
  },
};

function readAnchors(path: string, command: string): ChainAnchor[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(
      `--anchors: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'}).`,
      command,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`--anchors: ${path} is not JSON.`, command);
  }
  const parsed = AnchorsFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(
      `--anchors: ${path} is neither a list of {chain, seq, hash} nor a verify --json report with heads` +
        (issue === undefined ? '.' : ` (${issue.path.join('.') || 'root'}: ${issue.message}).`),
      command,
    );
  }
  return Array.isArray(parsed.data)
    ? parsed.data
    : Object.entries(parsed.data.heads).map(([chain, h]) => ({ chain, seq: h.seq, hash: h.hash }));
}

import { describe, expect, it } from 'vitest';
import { parseCommandArgs, parseTime, wantsHelp } from '../../../services/cli/args.js';
import { UsageError } from '../../../services/cli/cli-error.js';
import type { CommandSpec } from '../../../services/cli/command.js';

const spec: CommandSpec = {
  path: ['demo', 'run'],
  summary: 'A command for parser tests.',
  positionals: [{ name: 'caseId', description: 'The case.' }],
  options: {
    tool: { type: 'string', valueName: 'name', description: 'A tool.' },
    outcome: {
      type: 'string',
      choices: ['succeeded', 'failed'],
      required: true,
      description: 'The outcome.',
    },
    limit: { type: 'string', description: 'A number.' },
    from: { type: 'string', description: 'A time.' },
    'retention-ms': { type: 'string', description: 'May be -1.' },
    strict: { type: 'boolean', description: 'A switch.' },
  },
  needs: ['postgres'],
  examples: [],
  run: () => Promise.resolve(0),
};

function usageError(argv: string[]): UsageError {
  try {
    parseCommandArgs(spec, argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(2);
    expect((err as UsageError).hint).toBe("Run 'toolgate demo run --help' for usage.");
    return err as UsageError;
  }
  throw new Error(`parsed without error: ${argv.join(' ')}`);
}

describe('parseCommandArgs', () => {
  it('reads positionals, string and boolean flags, inline values and the connection and global flags', () => {
    const args = parseCommandArgs(spec, [
      'C-1',
      '--outcome',
      'failed',
      '--tool=issue_refund',
      '--strict',
      '--retention-ms',
      '-1',
      '--database-url',
      'postgres://x/y',
      '--json',
    ]);
    expect(args.positional(0)).toBe('C-1');
    expect(args.string('outcome')).toBe('failed');
    expect(args.string('tool')).toBe('issue_refund');
    expect(args.flag('strict')).toBe(true);
    expect(args.flag('json')).toBe(true);
    expect(args.string('retention-ms')).toBe('-1');
    expect(args.string('database-url')).toBe('postgres://x/y');
    expect(args.string('limit')).toBeUndefined();
    expect(args.has('limit')).toBe(false);
  });

  it('takes a value that looks like a flag only when written inline', () => {
    expect(parseCommandArgs(spec, ['C-1', '--outcome', 'failed', '--tool=--odd']).string('tool')).toBe(
      '--odd',
    );
    const err = usageError(['C-1', '--outcome', 'failed', '--tool', '--strict']);
    expect(err.message).toBe(
      "--tool needs a value: --tool <name> (write --tool=--strict if '--strict' is the value).",
    );
  });

  it('names an unknown flag and suggests the nearest known one', () => {
    expect(usageError(['C-1', '--outcome', 'failed', '--tol', 'x']).message).toBe(
      "unknown option --tol for 'demo run'. Did you mean '--tool'?",
    );
    expect(usageError(['C-1', '--outcome', 'failed', '--zzzzzzzz']).message).toBe(
      "unknown option --zzzzzzzz for 'demo run'.",
    );
  });

  it('names a missing required flag, a missing value, a value given to a switch, a repeated flag', () => {
    expect(usageError(['C-1']).message).toBe('missing required option --outcome <succeeded|failed>.');
    expect(usageError(['C-1', '--outcome']).message).toBe(
      '--outcome needs a value: --outcome <succeeded|failed>.',
    );
    expect(usageError(['C-1', '--outcome', 'failed', '--strict=yes']).message).toBe(
      '--strict takes no value.',
    );
    expect(usageError(['C-1', '--outcome', 'failed', '--outcome', 'failed']).message).toBe(
      '--outcome is given more than once.',
    );
  });

  it('refuses a value outside the choices, with a suggestion', () => {
    expect(usageError(['C-1', '--outcome', 'succeded']).message).toBe(
      "--outcome must be one of succeeded, failed (got 'succeded'). Did you mean 'succeeded'?",
    );
  });

  it('names a missing positional and refuses an extra one', () => {
    expect(usageError(['--outcome', 'failed']).message).toBe('missing <caseId>: The case.');
    expect(usageError(['C-1', 'C-2', '--outcome', 'failed']).message).toBe(
      "unexpected argument 'C-2': 'demo run' takes <caseId>.",
    );
  });

  it('treats everything after -- as positional', () => {
    const args = parseCommandArgs(spec, ['--outcome', 'failed', '--', '--weird-id']);
    expect(args.positional(0)).toBe('--weird-id');
  });

  it('checks whole numbers against their range', () => {
    const parse = (limit: string) =>
      parseCommandArgs(spec, ['C-1', '--outcome', 'failed', '--limit', limit]).int('limit', {
        min: 1,
        max: 10,
      });
    expect(parse('7')).toBe(7);
    for (const bad of ['0', '11', '2.5', 'ten', '1e3', '']) {
      expect(() => parse(bad)).toThrow(/--limit must be a whole number from 1 to 10/);
    }
    expect(parseCommandArgs(spec, ['C-1', '--outcome', 'failed']).int('limit', { min: 1, max: 10 }, 5)).toBe(
      5,
    );
  });

  it('reads times as ISO 8601 (UTC unless zoned), dates, or epoch ms, and refuses the rest', () => {
    const time = (from: string) =>
      parseCommandArgs(spec, ['C-1', '--outcome', 'failed', '--from', from]).time('from');
    expect(time('2025-03-01')).toBe(Date.UTC(2025, 2, 1));
    expect(time('2025-03-01T10:00:00Z')).toBe(Date.UTC(2025, 2, 1, 10));
    expect(time('2025-03-01T10:00')).toBe(Date.UTC(2025, 2, 1, 10));
    expect(time('2025-03-01T10:00:00+02:00')).toBe(Date.UTC(2025, 2, 1, 8));
    expect(time('2025-03-01T10:00:00.250Z')).toBe(Date.UTC(2025, 2, 1, 10, 0, 0, 250));
    expect(time('1740823200000')).toBe(1_740_823_200_000);
    for (const bad of ['yesterday', '2025-13-01', '01/03/2025', '2025-03-01T25:00:00Z']) {
      expect(() => time(bad)).toThrow(/--from must be an ISO 8601 time/);
    }
    expect(parseTime(' 2025-03-01 ')).toBe(Date.UTC(2025, 2, 1));
  });
});

describe('wantsHelp', () => {
  it('finds -h or --help anywhere before --', () => {
    expect(wantsHelp(['x', '--help'])).toBe(true);
    expect(wantsHelp(['-h'])).toBe(true);
    expect(wantsHelp(['--', '--help'])).toBe(false);
    expect(wantsHelp(['--helpful'])).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { EXIT } from '../../../services/cli/cli-error.js';
import { cli, type CliRun } from './capture.js';

/**
 * Checks that `run` exited with `exitCode`, printed nothing on stdout and wrote one JSON error object
 * on stderr with that kind and exit code and a message containing `message`.
 */
function expectJsonError(run: CliRun, kind: string, exitCode: number, message: string): void {
  expect(run.code).toBe(exitCode);
  expect(run.stdout).toBe('');
  const error = (JSON.parse(run.stderr) as { error: { message: string } }).error;
  expect(error).toMatchObject({ kind, exitCode });
  expect(error.message).toContain(message);
}

describe('routing and usage errors (exit 2)', () => {
  it.each<[string, string[], string[]]>([
    ['no command prints the command list on stderr', [], ['toolgate: no command given.', 'audit who']],
    [
      'an unknown subcommand suggests within its group',
      ['audit', 'verfy'],
      [
        "unknown command 'audit verfy'. Did you mean 'audit verify'?",
        "Run 'toolgate audit --help' for usage.",
      ],
    ],
    [
      'a missing required flag is named',
      ['registry', 'export'],
      [
        'missing required option --format <openai|anthropic>.',
        "Run 'toolgate registry export --help' for usage.",
      ],
    ],
    [
      'a command that needs a database says which setting is missing',
      ['audit', 'verify'],
      ["'audit verify' needs DATABASE_URL: set it in the environment or pass --database-url."],
    ],
    [
      // The database URL points nowhere; the bad --from must be reported first (2, not 3).
      'arguments are checked before any server is contacted: a --from that is no time',
      ['audit', 'query', '--from', 'last tuesday', '--database-url', 'postgres://u@127.0.0.1:1/x'],
      [
        "--from must be an ISO 8601 time such as 2025-03-01T10:00:00Z, a date, or epoch ms (got 'last tuesday').",
      ],
    ],
    [
      'arguments are checked before any server is contacted: --from after --to',
      ['audit', 'who', 'O-1', '--tool', 't', '--from', '2025-03-02', '--to', '2025-03-01'],
      ['--from must be earlier than --to.'],
    ],
  ])('%s', async (_, argv, messages) => {
    const run = await cli(argv);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stdout).toBe('');
    for (const message of messages) expect(run.stderr).toContain(message);
  });

  it('an unknown command suggests the nearest group, or the full name of a subcommand', async () => {
    const typo = await cli(['adit', 'who']);
    expect(typo.code).toBe(EXIT.usage);
    expect(typo.stderr).toMatch(/^toolgate: unknown command 'adit'\. Did you mean 'audit'\?\n/);
    const bare = await cli(['verify']);
    expect(bare.stderr).toContain("unknown command 'verify'. Did you mean 'audit verify'?");
  });

  it('a group without a command lists its commands', async () => {
    const run = await cli(['audit', '--json']);
    expect(run.code).toBe(EXIT.usage);
    expect(JSON.parse(run.stderr)).toEqual({
      error: {
        kind: 'usage',
        exitCode: 2,
        message: "'audit' needs a command: query, who, verify.",
        hint: "Run 'toolgate audit --help' for usage.",
      },
    });
  });

  it('in --json mode a usage error is one JSON object on stderr and stdout stays empty', async () => {
    const run = await cli(['audit', 'query', '--limit', '0', '--json']);
    expectJsonError(run, 'usage', EXIT.usage, '--limit must be a whole number from 1 to 10000');
  });

  it('a malformed variable is named without echoing its value; a flag overrides it', async () => {
    const env = { DATABASE_URL: 'mysql://admin:s3cret@db/x' };
    const run = await cli(['audit', 'verify'], { env });
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain('DATABASE_URL in the environment is invalid: expected postgres://…');
    expect(run.stderr).not.toContain('s3cret');
    const flag = await cli(['audit', 'verify', '--database-url', 'nope'], { env });
    expect(flag.stderr).toContain('--database-url: expected postgres://…');
  });
});

describe('unreachable dependencies (exit 3)', () => {
  it.each<[string, string[], string[]]>([
    [
      'Postgres refusing connections',
      ['audit', 'verify', '--database-url', 'postgres://ops:pw@127.0.0.1:1/toolgate'],
      ['cannot connect to postgres://ops:***@127.0.0.1:1/toolgate', 'Check that postgres is up'],
    ],
    [
      'the schema registry refusing connections',
      ['schemas', 'check', '--registry', 'http://127.0.0.1:1/apis/ccompat/v7'],
      ['cannot reach the schema registry at http://127.0.0.1:1/apis/ccompat/v7'],
    ],
  ])('%s', async (_, argv, messages) => {
    const run = await cli(argv);
    expect(run.code).toBe(EXIT.unreachable);
    for (const message of messages) expect(run.stderr).toContain(message);
    // A password in a URL is never echoed.
    expect(run.stderr).not.toContain(':pw@');
  });

  it('Kafka refusing connections', async () => {
    const run = await cli(['topics', 'create', '--brokers', '127.0.0.1:1', '--json']);
    expectJsonError(run, 'unreachable', EXIT.unreachable, 'cannot connect to Kafka at 127.0.0.1:1');
  });
});

describe('schemas check', () => {
  it('checks the committed history of every schema (exit 0) in text and JSON', async () => {
    const text = await cli(['schemas', 'check']);
    expect(text.code).toBe(EXIT.ok);
    expect(text.stdout).toContain('schemas/tool-call-requested.avsc');
    expect(text.stdout).toContain('OK: every schema is backward compatible.');
    const json = await cli(['schemas', 'check', '--json']);
    expect(json.code).toBe(EXIT.ok);
    const body = json.json<{ ok: boolean; history: { file: string; problems: string[] }[] }>();
    expect(body.ok).toBe(true);
    expect(body.history.map((h) => h.file).sort()).toEqual([
      'schemas/audit-record.avsc',
      'schemas/dead-letter.avsc',
      'schemas/tool-call-requested.avsc',
      'schemas/tool-call-result.avsc',
    ]);
    expect(body).not.toHaveProperty('registry');
  });
});

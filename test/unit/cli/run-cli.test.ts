import { describe, expect, it } from 'vitest';
import { EXIT } from '../../../services/cli/cli-error.js';
import { cli } from './capture.js';

describe('routing and usage errors (exit 2)', () => {
  it('no command prints the command list on stderr', async () => {
    const run = await cli([]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('toolgate: no command given.');
    expect(run.stderr).toContain('audit who');
  });

  it('an unknown command suggests the nearest group, or the full name of a subcommand', async () => {
    const typo = await cli(['adit', 'who']);
    expect(typo.code).toBe(EXIT.usage);
    expect(typo.stderr).toMatch(/^toolgate: unknown command 'adit'\. Did you mean 'audit'\?\n/);
    const bare = await cli(['verify']);
    expect(bare.stderr).toContain("unknown command 'verify'. Did you mean 'audit verify'?");
  });

  it('an unknown subcommand suggests within its group', async () => {
    const run = await cli(['audit', 'verfy']);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain("unknown command 'audit verfy'. Did you mean 'audit verify'?");
    expect(run.stderr).toContain("Run 'toolgate audit --help' for usage.");
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

  it('a missing required flag is named', async () => {
    const run = await cli(['registry', 'export']);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain('missing required option --format <openai|anthropic>.');
    expect(run.stderr).toContain("Run 'toolgate registry export --help' for usage.");
  });

  it('in --json mode a usage error is one JSON object on stderr and stdout stays empty', async () => {
    const run = await cli(['audit', 'query', '--limit', '0', '--json']);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stdout).toBe('');
    expect(JSON.parse(run.stderr).error).toMatchObject({ kind: 'usage', exitCode: 2 });
    expect(JSON.parse(run.stderr).error.message).toContain('--limit must be a whole number from 1 to 10000');
  });

  it('a command that needs a database says which setting is missing', async () => {
    const run = await cli(['audit', 'verify']);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain(
      "'audit verify' needs DATABASE_URL: set it in the environment or pass --database-url.",
    );
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

  it('arguments are checked before any server is contacted', async () => {
    // The database URL points nowhere; the bad --from must be reported first (2, not 3).
    const run = await cli([
      'audit',
      'query',
      '--from',
      'last tuesday',
      '--database-url',
      'postgres://u@127.0.0.1:1/x',
    ]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain(
      "--from must be an ISO 8601 time such as 2025-03-01T10:00:00Z, a date, or epoch ms (got 'last tuesday').",
    );
    const order = await cli([
      'audit',
      'who',
      'O-1',
      '--tool',
      't',
      '--from',
      '2025-03-02',
      '--to',
      '2025-03-01',
    ]);
    expect(order.code).toBe(EXIT.usage);
    expect(order.stderr).toContain('--from must be earlier than --to.');
  });
});

describe('unreachable dependencies (exit 3)', () => {
  it('Postgres refusing connections', async () => {
    const run = await cli(['audit', 'verify', '--database-url', 'postgres://ops:pw@127.0.0.1:1/toolgate']);
    expect(run.code).toBe(EXIT.unreachable);
    expect(run.stderr).toContain('cannot connect to postgres://ops:***@127.0.0.1:1/toolgate');
    expect(run.stderr).not.toContain(':pw@');
    expect(run.stderr).toContain('Check that postgres is up');
  });

  it('Kafka refusing connections', async () => {
    const run = await cli(['topics', 'create', '--brokers', '127.0.0.1:1', '--json']);
    expect(run.code).toBe(EXIT.unreachable);
    expect(run.stdout).toBe('');
    expect(JSON.parse(run.stderr).error).toMatchObject({ kind: 'unreachable', exitCode: 3 });
    expect(JSON.parse(run.stderr).error.message).toContain('cannot connect to Kafka at 127.0.0.1:1');
  });

  it('the schema registry refusing connections', async () => {
    const run = await cli(['schemas', 'check', '--registry', 'http://127.0.0.1:1/apis/ccompat/v7']);
    expect(run.code).toBe(EXIT.unreachable);
    expect(run.stderr).toContain('cannot reach the schema registry at http://127.0.0.1:1/apis/ccompat/v7');
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

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnvironment, INSPECT_COMMANDS, kafkaRunFollowUp } from '../../../services/demo/follow-up.js';
import type { DemoToolgate } from '../../../services/demo/demo-toolgate.js';
import { startEmbeddedDemo } from '../../../services/demo/embedded-demo.js';
import { demoHelp } from '../../../services/demo/help.js';
import { PROVIDER_FORMATS, runRefundStory } from '../../../services/demo/story.js';

/** `npm run demo`'s own command line: its help, its errors, what a kafka run prints last. */
const execFileAsync = promisify(execFile);
const root = join(import.meta.dirname, '../../..');

async function demo(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(
      process.execPath,
      ['--import', 'tsx', 'services/demo/main.ts', ...args],
      { cwd: root, encoding: 'utf8' },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const servers = {
  kafkaBrokers: ['k1:9092', 'k2:9092'],
  schemaRegistryUrl: 'http://registry:8081/apis/ccompat/v7',
  redisUrl: 'redis://cache:6379',
  databaseUrl: 'postgres://ops:s3cret@db:5432/toolgate',
};

describe('npm run demo -- --help', () => {
  it('prints the help on stdout and exits 0, starting nothing', async () => {
    const r = await demo(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(demoHelp());
    expect(r.stdout).not.toContain('refund story (');
    expect(r.stderr).toBe('');
    for (const option of ['--embedded', '--kafka', '--clean-up <run-id>', '--verbose', '-h, --help'])
      expect(r.stdout).toContain(`  ${option}`);
    for (const variable of ['KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL', 'REDIS_URL', 'DATABASE_URL'])
      expect(r.stdout).toContain(variable);
    expect(r.stdout).toContain('npm run demo -- --clean-up demo_');
  }, 30_000);

  it('answers an unknown option on stderr with exit 1, pointing at the help', async () => {
    const r = await demo(['--kafak']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe("Unknown option --kafak. Run 'npm run demo -- --help' for the options.\n");
  }, 30_000);
});

describe('what a kafka run prints last', () => {
  it('gives the CLI the run as its variables name it: schema in the URL, topic and key prefixes', () => {
    const env = cliEnvironment('demo_1a2b', servers);
    expect(env).toEqual({
      DATABASE_URL: expect.any(String) as string,
      KAFKA_BROKERS: 'k1:9092,k2:9092',
      SCHEMA_REGISTRY_URL: servers.schemaRegistryUrl,
      REDIS_URL: servers.redisUrl,
      TOOLGATE_TOPIC_PREFIX: 'demo_1a2b',
      REDIS_KEY_PREFIX: 'demo_1a2b:',
    });
    const url = new URL(env.DATABASE_URL!);
    expect(url.searchParams.get('options')).toBe('-c search_path="demo_1a2b"');
    expect(`${url.protocol}//${url.username}:${url.password}@${url.host}${url.pathname}`).toBe(
      'postgres://ops:s3cret@db:5432/toolgate',
    );
  });

  it('prints the exports (password hidden), the CLI commands and the clean-up command', () => {
    const lines = kafkaRunFollowUp('demo_1a2b', servers);
    expect(lines).toContain(
      "  export DATABASE_URL='postgres://ops:***@db:5432/toolgate?options=-c+search_path%3D%22demo_1a2b%22'",
    );
    expect(lines).toContain('  export TOOLGATE_TOPIC_PREFIX=demo_1a2b');
    expect(lines).toContain('  export REDIS_KEY_PREFIX=demo_1a2b:');
    expect(lines).toContain('  (a password is shown as ***: put yours back in)');
    expect(lines.join('\n')).not.toContain('s3cret');
    for (const argv of INSPECT_COMMANDS) expect(lines).toContain(`  npm run toolgate -- ${argv.join(' ')}`);
    expect(lines.at(-1)).toBe('  npm run demo -- --clean-up demo_1a2b');
    const local = kafkaRunFollowUp('demo_1a2b', { ...servers, databaseUrl: 'postgres://postgres@db/test' });
    expect(local.some((l) => l.includes('***'))).toBe(false);
  });
});

describe('the story says which provider format each step uses', () => {
  let toolgate: DemoToolgate;
  const lines: string[] = [];
  beforeAll(async () => {
    toolgate = await startEmbeddedDemo();
    await runRefundStory(toolgate, (line) => lines.push(line));
  }, 30_000);
  afterAll(async () => {
    await toolgate.stop();
  });

  it('steps 1 to 4 speak OpenAI, step 5 Anthropic, and the messages printed match', () => {
    const text = lines.join('\n');
    const steps = text.split(/\n━━ Step \d/).slice(1);
    expect(steps).toHaveLength(6);
    const formats = steps.map((s) => /provider format {3}(\S+):/.exec(s)?.[1]);
    expect(formats).toEqual(['OpenAI', 'OpenAI', 'OpenAI', 'OpenAI', 'Anthropic', undefined]);
    expect(text).toContain(`  provider format   ${PROVIDER_FORMATS.anthropic}`);
    expect(steps[4]).toContain('user message');
    expect(steps[0]).toContain('tool message');
  });
});

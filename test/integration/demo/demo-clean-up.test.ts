import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topicNames, valueSubject } from '../../../libs/events/topics.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import { cleanUpDemoRun } from '../../../services/demo/clean-up.js';
import { DEMO_RUN_ID } from '../../../services/demo/config.js';
import { INSPECT_COMMANDS } from '../../../services/demo/follow-up.js';
import { startKafkaDemo } from '../../../services/demo/kafka-demo.js';
import { runRefundStory } from '../../../services/demo/story.js';
import { quietLogger } from '../../../services/embedded/topology-logger.js';
import { DATABASE_URL, kafkaBrokers, REDIS_URL, schemaRegistryUrl } from '../../helpers/env.js';
import { createTestKafka, type TestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import { cli } from '../../unit/cli/capture.js';
import { holdKeys, removeDemoRun, scanKeys } from './demo-run-cleanup.js';

/**
 * `npm run demo -- --kafka` as an operator runs it (its own process, on the real servers), then
 * the commands it prints: the toolgate CLI ones against what it left, and `--clean-up <run-id>`,
 * which must remove that run's topics, consumer groups, registry subjects, Redis keys and Postgres
 * schema and leave another run (started here in-process) exactly as it was.
 */
const execFileAsync = promisify(execFile);
const root = join(import.meta.dirname, '../../..');

const other = uniqueName('demo_it');
let kafka: TestKafka;
let redis: Redis;
/** The process run's output and the id it printed. */
let printed: string;
let runId: string | undefined;

const servers = () => ({
  kafkaBrokers: kafkaBrokers(),
  schemaRegistryUrl: schemaRegistryUrl(),
  redisUrl: REDIS_URL,
  databaseUrl: DATABASE_URL,
});

/** `npm run demo -- <args>` (without npm's banner): its own process, configured by environment. */
async function demo(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    KAFKA_BROKERS: kafkaBrokers().join(','),
    SCHEMA_REGISTRY_URL: schemaRegistryUrl(),
    REDIS_URL,
    DATABASE_URL,
  };
  try {
    const { stdout, stderr } = await execFileAsync(
      process.execPath,
      ['--import', 'tsx', 'services/demo/main.ts', ...args],
      { cwd: root, env, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** What exists on the servers under a run's names. */
async function leftOf(id: string) {
  const admin = await kafka.admin();
  const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${id}.`));
  const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.includes(id));
  // Asked by name: the registry's subject listing is cut at 1,000 names on a busy test registry.
  const subjects: string[] = [];
  for (const topic of Object.values(topicNames(id))) {
    const subject = valueSubject(topic);
    const res = await fetch(`${schemaRegistryUrl()}/subjects/${encodeURIComponent(subject)}/versions`);
    if (res.ok) subjects.push(subject);
  }
  const keys = await scanKeys(redis, `${id}:`);
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [id]);
    return {
      topics: topics.sort(),
      groups: groups.sort(),
      subjects,
      keys: keys.length,
      schema: rowCount === 1,
    };
  } finally {
    await client.end();
  }
}

/** The `export NAME=value` lines the run printed, as an environment (single quotes undone). */
function printedEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of text.matchAll(/^ {2}export ([A-Z_]+)=(.*)$/gm)) {
    const raw = m[2]!;
    env[m[1]!] = raw.startsWith("'") ? raw.slice(1, -1).replace(/'\\''/g, "'") : raw;
  }
  return env;
}

beforeAll(async () => {
  kafka = createTestKafka('demo-clean-up');
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  // Another run, which the clean-up must not touch.
  const tg = await startKafkaDemo(servers(), quietLogger, () => undefined, { runId: other });
  try {
    await runRefundStory(tg, () => undefined);
  } finally {
    await tg.stop();
  }
  const run = await demo(['--kafka']);
  printed = run.stdout;
  runId = /npm run demo -- --clean-up (\S+)$/m.exec(printed)?.[1];
  expect(run.code, run.stderr).toBe(0);
}, 180_000);

afterAll(async () => {
  // Whatever a failed assertion left behind.
  if (runId !== undefined && DEMO_RUN_ID.test(runId)) await cleanUpDemoRun(servers(), runId);
  await removeDemoRun({
    runId: other,
    topics: topicNames(other),
    kafka,
    redis,
    databaseUrl: DATABASE_URL,
    registryUrl: schemaRegistryUrl(),
  });
  await redis?.quit();
  await kafka?.close();
}, 60_000);

describe('npm run demo -- --kafka, then --clean-up', () => {
  it('prints the run id, the CLI environment and commands, and the clean-up command', () => {
    expect(runId).toMatch(DEMO_RUN_ID);
    expect(printed).toContain('Done.');
    const env = printedEnv(printed);
    expect(env).toMatchObject({ TOOLGATE_TOPIC_PREFIX: runId, REDIS_KEY_PREFIX: `${runId}:` });
    expect(new URL(env.DATABASE_URL!).searchParams.get('options')).toBe(`-c search_path="${runId}"`);
    for (const argv of INSPECT_COMMANDS)
      expect(printed).toContain(`  npm run toolgate -- ${argv.join(' ')}\n`);
  });

  it('the printed CLI commands, with the printed environment, read the run', async () => {
    const env = printedEnv(printed);
    const commands = [...printed.matchAll(/^ {2}npm run toolgate -- (.+)$/gm)].map((m) => m[1]!.split(' '));
    expect(commands).toHaveLength(INSPECT_COMMANDS.length);
    for (const argv of commands) {
      const r = await cli(argv, { env });
      expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(EXIT.ok);
    }
    const verify = await cli(['audit', 'verify', '--chain', 't1'], { env });
    expect(verify.stdout).toContain('OK: 6 records in 1 chain verified');
    const who = await cli(['audit', 'who', 'O-5512', '--tool', 'issue_refund', '--tenant', 't1', '--json'], {
      env,
    });
    expect(who.json<{ did: { principalId: string }[] }>().did.map((d) => d.principalId)).toEqual([
      'storefront:C-1',
    ]);
  });

  it('removes exactly what that run created, and nothing of another run', async () => {
    const id = runId!;
    // Counted, then removed by another process: keys that would expire in between stay until removed.
    await holdKeys(redis, `${id}:`);
    await holdKeys(redis, `${other}:`);
    const beforeMine = await leftOf(id);
    const beforeOther = await leftOf(other);
    // Both runs left all five kinds of things behind.
    for (const before of [beforeMine, beforeOther]) {
      expect(before.topics).toHaveLength(4);
      expect(before.groups.length).toBeGreaterThanOrEqual(3);
      expect(before.subjects.length).toBeGreaterThanOrEqual(4);
      expect(before.keys).toBeGreaterThan(0);
      expect(before.schema).toBe(true);
    }

    const cleaned = await demo(['--clean-up', id]);
    expect(cleaned.code, cleaned.stderr).toBe(0);
    expect(cleaned.stdout).toContain(`Kafka topics deleted:       4: ${beforeMine.topics.join(', ')}`);
    expect(cleaned.stdout).toContain(`Redis keys deleted:         ${beforeMine.keys} (${id}:*)`);
    expect(cleaned.stdout).toContain(`Postgres schema:            "${id}" dropped`);

    expect(await leftOf(id)).toEqual({ topics: [], groups: [], subjects: [], keys: 0, schema: false });
    expect(await leftOf(other)).toEqual(beforeOther);
    // The printed CLI environment now points at nothing: the schema is gone.
    const after = await cli(['audit', 'query', '--tenant', 't1'], { env: printedEnv(printed) });
    expect(after.code).not.toBe(EXIT.ok);

    const again = await demo(['--clean-up', id]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Nothing was left of ${id}`);
    expect(await leftOf(other)).toEqual(beforeOther);
  }, 120_000);
});

import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaBrokers, REDIS_URL, schemaRegistryUrl } from '../../helpers/env.js';
import { createTestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import {
  installConsumer,
  installedVersion,
  packToolgate,
  runProgram,
  type PackedPackage,
} from '../../helpers/packed-package.js';
import { createTestRedis } from '../../helpers/redis.js';
import { startExecutorProcess, type ExecutorProcess } from '../executor/executor-process.js';

/**
 * toolgate as a user meets it: `npm pack`, installed into a project of its own that has only its
 * package.json (test/fixtures/consumer-project), type-checked with strict tsc and no skipLibCheck,
 * and run — embedded, then through the installed `toolgate executor` bin on Kafka and Redis.
 */
let packed: PackedPackage;
let project: string;

beforeAll(async () => {
  packed = await packToolgate();
  project = await installConsumer('consumer-project', {
    TARBALL: packed.tarball,
    TYPES_NODE: installedVersion('@types/node'),
    TYPESCRIPT: installedVersion('typescript'),
    ZOD: installedVersion('zod'),
  });
}, 600_000);

interface Summary {
  readonly turns: Array<{
    provider: string;
    results: Array<{ callId: string; tool: string; outcome: string; payload?: unknown }>;
    errorCodes: Array<string | null>;
    messages: number;
  }>;
  readonly invocations?: Record<string, number>;
  readonly offered?: string[];
}

/** Both turns: the valid lookup succeeds, the invalid call is refused by the schema. */
function expectTwoTurns(summary: Summary): void {
  const [openai, anthropic] = summary.turns;
  expect(openai!.provider).toBe('openai');
  expect(openai!.results.map((r) => [r.callId, r.outcome])).toEqual([
    ['call_a', 'SUCCESS'],
    ['call_b', 'SCHEMA_INVALID'],
  ]);
  expect(openai!.results[0]!.payload).toEqual({ ticket_id: 'T-1', title: 'Printer on fire', status: 'open' });
  expect(openai!.messages).toBe(2);
  expect(anthropic!.provider).toBe('anthropic');
  expect(anthropic!.results.map((r) => [r.callId, r.tool, r.outcome])).toEqual([
    ['toolu_a', 'lookup_ticket', 'SUCCESS'],
    ['toolu_b', 'close_ticket', 'SCHEMA_INVALID'],
  ]);
  expect(anthropic!.messages).toBe(1);
}

describe('the packed package', () => {
  it('holds the build and nothing of the repository around it', () => {
    expect(packed.files.filter((f) => /^(test|bench|deploy|docs|\.ci)\//.test(f))).toEqual([]);
    expect(packed.files.filter((f) => f.endsWith('.map') || f.endsWith('.test.js'))).toEqual([]);
    expect(packed.files).toContain('dist/services/cli/main.js');
    expect(packed.files).toContain('dist/services/executor/public.d.ts');
    expect(packed.files.some((f) => f.startsWith('dist/schemas/'))).toBe(true);
    console.log(
      `packed: ${packed.files.length} files, ${packed.bytes} bytes (${packed.unpackedBytes} unpacked)`,
    );
  });

  it('type-checks a consumer project with strict tsc and no skipLibCheck, wrong shapes refused', async () => {
    const tsc = await runProgram([join(project, 'node_modules/.bin/tsc'), '-p', '.'], { cwd: project });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.code).toBe(0);

    // The @ts-expect-error lines in src/wrong-shapes.ts pass only while they are errors; without
    // them each wrong shape must be reported.
    const bare = await runProgram(
      [
        process.execPath,
        '-e',
        `
        const fs = require('node:fs');
        const file = 'src/wrong-shapes.ts';
        fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^\\s*\\/\\/ @ts-expect-error.*$/gm, ''));`,
      ],
      { cwd: project },
    );
    expect(bare.code).toBe(0);
    const unguarded = await runProgram([join(project, 'node_modules/.bin/tsc'), '-p', '.', '--noEmit'], {
      cwd: project,
    });
    expect(unguarded.code).not.toBe(0);
    // One wrong shape per statement: every one of the four is reported (some more than once).
    const lines = new Set(
      [...unguarded.stdout.matchAll(/src\/wrong-shapes\.ts\((\d+),\d+\): error/g)].map((m) => m[1]),
    );
    expect(lines.size).toBe(4);
  }, 120_000);

  it('runs the tools given, and only those, on the embedded toolgate', async () => {
    const out = await runProgram([process.execPath, 'build/embedded.js'], { cwd: project });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const summary = JSON.parse(out.stdout) as Summary;
    expectTwoTurns(summary);
    expect([...summary.offered!].sort()).toEqual(['close_ticket', 'lookup_ticket']);
    // The invalid calls never reached a tool: two lookups ran, no close.
    expect(summary.invocations).toEqual({ lookup_ticket: 2, close_ticket: 0 });
  }, 60_000);

  describe('through the installed executor bin on Kafka and Redis, with no database', () => {
    const prefix = uniqueName('tg_pack');
    const kafka = createTestKafka('tg-pack');
    const redis = createTestRedis('tg-pack');
    let executor: ExecutorProcess;
    let env: Record<string, string>;
    let executorEnv: Record<string, string>;

    beforeAll(async () => {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      writeFileSync(join(project, 'signing-key.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
      const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'pack-1', alg: 'EdDSA', use: 'sig' };
      writeFileSync(join(project, 'jwks.json'), JSON.stringify({ keys: [jwk] }));
      env = {
        KAFKA_BROKERS: kafkaBrokers().join(','),
        SCHEMA_REGISTRY_URL: schemaRegistryUrl(),
        TOOLGATE_TOPIC_PREFIX: prefix,
        CALLS_PARTITIONS: '2',
        RESULTS_PARTITIONS: '1',
        AUDIT_PARTITIONS: '1',
        DLQ_PARTITIONS: '1',
      };
      executorEnv = {
        ...env,
        REDIS_URL,
        REDIS_KEY_PREFIX: redis.prefix,
        TOOLGATE_GROUP_ID: `${prefix}-executors`,
        PRINCIPAL_JWKS_FILE: join(project, 'jwks.json'),
        HTTP_PORT: '0',
        KAFKA_SESSION_TIMEOUT_MS: '6000',
        KAFKA_HEARTBEAT_MS: '500',
      };
      executor = startExecutorProcess('packed-executor', executorEnv, [], {
        argv: [join(project, 'node_modules/.bin/toolgate'), 'executor', '--catalog', './src/tools.ts'],
        cwd: project,
      });
      await executor.ready;
    }, 120_000);

    afterAll(async () => {
      if (executor && executor.child.exitCode === null) executor.child.kill('SIGTERM');
      const exited = await executor?.exited;
      expect(exited?.code).toBe(0);
      const admin = await kafka.admin();
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
      if (topics.length > 0) await admin.deleteTopics({ topics });
      await kafka.close();
      await redis.close();
    }, 60_000);

    it('answers both turns of an agent backend built with the installed SDK', async () => {
      const out = await runProgram([process.execPath, 'build/kafka.js'], {
        cwd: project,
        env: {
          ...env,
          PRINCIPAL_SIGNING_KEY_FILE: join(project, 'signing-key.pem'),
          PRINCIPAL_KID: 'pack-1',
        },
      });
      expect(out.stderr).toBe('');
      expect(out.code).toBe(0);
      expectTwoTurns(JSON.parse(out.stdout) as Summary);
    }, 60_000);

    it('refuses a catalog module without a default export in one line, exit 1', async () => {
      writeFileSync(join(project, 'src/not-a-catalog.ts'), 'export const tools = [];\n');
      const out = await runProgram(
        [join(project, 'node_modules/.bin/toolgate'), 'executor', '--catalog', './src/not-a-catalog.ts'],
        { cwd: project, env: executorEnv },
      );
      expect(out.code).toBe(1);
      expect(out.stderr).toBe(
        'toolgate executor: catalog module ./src/not-a-catalog.ts: no default export; ' +
          'export default defineCatalog({ tools }) (a catalog), or a function (env) => catalog that builds one\n',
      );
    });
  });
});

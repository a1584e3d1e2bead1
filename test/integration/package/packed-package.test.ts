import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaBrokers, REDIS_URL, schemaRegistryUrl } from '../../helpers/env.js';
import { createTestKafka, type TestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import {
  installConsumer,
  installedVersion,
  packToolgate,
  runProgram,
  type PackedPackage,
} from '../../helpers/packed-package.js';
import { createTestRedis, type TestRedis } from '../../helpers/redis.js';
import { openAICompletion } from '../../helpers/tool-calls.js';
import { startExecutorProcess, type ExecutorProcess } from '../executor/executor-process.js';

/**
 * toolgate as a user meets it: `npm pack`, installed into a project of its own that has only its
 * package.json (test/fixtures/consumer-project), type-checked with strict tsc and no skipLibCheck,
 * and run — embedded, then through the installed `toolgate executor` bin on Kafka and Redis.
 */
let packed: PackedPackage;
let project: string;
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The part of package.json the export-map check reads. */
interface PackageJson {
  readonly exports: Record<string, string | { readonly types: string; readonly default: string }>;
}

beforeAll(async () => {
  packed = await packToolgate();
  project = await installConsumer('consumer-project', {
    TARBALL: packed.tarball,
    TYPES_NODE: installedVersion('@types/node'),
    TYPESCRIPT: installedVersion('typescript'),
    ZOD: installedVersion('zod'),
    OPENAI: installedVersion('openai'),
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
    // Every entry point of the export map (toolgate, toolgate/sdk, toolgate/testing...) is in the
    // tarball, types and code, so none of them resolves to a file that was moved away.
    const exportMap = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as PackageJson)
      .exports;
    const targets = Object.values(exportMap).flatMap((target) =>
      typeof target === 'string' ? [target] : [target.types, target.default],
    );
    expect(targets.length).toBeGreaterThan(8);
    expect(targets.map((t) => t.replace(/^\.\//, '')).filter((t) => !packed.files.includes(t))).toEqual([]);
    console.log(
      `packed: ${packed.files.length} files, ${packed.bytes} bytes (${packed.unpackedBytes} unpacked)`,
    );
  });

  it('holds every document that README.md and ARCHITECTURE.md link to', () => {
    const linked = ['README.md', 'ARCHITECTURE.md'].flatMap((doc) =>
      [...readFileSync(join(REPO_ROOT, doc), 'utf8').matchAll(/\]\(([^)#:\s]+)(?:#[^)]*)?\)/g)].map(
        (m) => m[1]!,
      ),
    );
    expect(linked).toContain('ARCHITECTURE.md');
    expect([...new Set(linked)].filter((path) => !packed.files.includes(path))).toEqual([]);
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

  it('loads a Cedar policy over an aggregate fact, and refuses one that does not fit the tools, naming the line', async () => {
    const out = await runProgram([process.execPath, 'build/policy.js'], { cwd: project });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const got = JSON.parse(out.stdout) as {
      second: unknown;
      third: unknown;
      typo: string;
      facts: string[];
    };
    expect(got.second).toEqual({ allowed: true });
    expect(got.third).toEqual({
      allowed: false,
      ruleId: 'close-limit',
      reason: 'At most 2 tickets a day may be closed by an agent (this would be 3).',
      alternative: 'Ask a person on the help desk to close it.',
    });
    expect(got.typo).toMatch(/line 6, column \d+: .*closed_todya.*did you mean `closed_today`/);
    expect(got.facts).toEqual(['closed_today']);
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

    afterAll(() => stopAndClean(executor, prefix, kafka, redis), 60_000);

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

    it('checks its schemas against the registry the executor registered them in, with no git', async () => {
      const out = await runProgram(
        [
          join(project, 'node_modules/.bin/toolgate'),
          'schemas',
          'check',
          '--registry',
          schemaRegistryUrl(),
          '--prefix',
          prefix,
        ],
        { cwd: project, env },
      );
      expect(out.stderr).toBe('');
      expect(out.code).toBe(0);
      for (const kind of ['calls', 'results', 'audit', 'dlq'])
        expect(out.stdout).toContain(`${prefix}.${kind}-value`);
    });

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
  describe("README's four steps, as written", () => {
    const prefix = uniqueName('tg_readme');
    const kafka = createTestKafka('tg-readme');
    const redis = createTestRedis('tg-readme');
    let dir: string;
    let executor: ExecutorProcess;
    let model: Server;
    const modelRequests: Array<{ tools?: Array<{ function: { name: string } }> }> = [];

    /** The servers of this test run and its own names, in place of the README's defaults. */
    const localized = (text: string): string =>
      text
        .replaceAll('127.0.0.1:19092', kafkaBrokers().join(','))
        .replaceAll('http://127.0.0.1:18081/apis/ccompat/v7', schemaRegistryUrl())
        .replaceAll('redis://127.0.0.1:6379', REDIS_URL)
        .replaceAll("topicNames('toolgate')", `topicNames('${prefix}')`);

    beforeAll(async () => {
      const steps = readmeSteps();
      dir = join(project, 'quickstart');
      mkdirSync(dir);
      writeFileSync(join(dir, 'my-tools.ts'), steps.files['my-tools.ts']!);
      writeFileSync(join(dir, 'agent.ts'), localized(steps.files['agent.ts']!));
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          extends: '../tsconfig.json',
          compilerOptions: { noEmit: true, rootDir: '.' },
          include: ['*.ts'],
        }),
      );

      // Step 3, line 1 exactly; line 2 with this run's servers and isolated names.
      const [keysLine, executorLine] = steps.shell;
      expect(keysLine).toBe('npx toolgate keys generate --out keys --kid agent-backend-1');
      const keys = await runProgram(keysLine!.split(' '), { cwd: dir });
      expect(keys.code).toBe(0);
      const { env: readmeEnv, argv } = parseCommand(localized(executorLine!));
      expect(argv).toEqual(['npx', 'toolgate', 'executor', '--catalog', './my-tools.ts']);
      expect(Object.keys(readmeEnv).sort()).toEqual([
        'KAFKA_BROKERS',
        'PRINCIPAL_JWKS_FILE',
        'REDIS_URL',
        'SCHEMA_REGISTRY_URL',
      ]);
      executor = startExecutorProcess(
        'readme-executor',
        {
          ...readmeEnv,
          TOOLGATE_TOPIC_PREFIX: prefix,
          REDIS_KEY_PREFIX: redis.prefix,
          TOOLGATE_GROUP_ID: `${prefix}-executors`,
          HTTP_PORT: '0',
        },
        [],
        { argv: [join(project, 'node_modules/.bin/toolgate'), ...argv.slice(2)], cwd: dir },
      );

      // The model: an OpenAI-compatible endpoint that asks for lookup_ticket once.
      model = createServer((req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          modelRequests.push(JSON.parse(body) as (typeof modelRequests)[number]);
          res.setHeader('content-type', 'application/json');
          res.end(
            JSON.stringify(
              openAICompletion([
                { id: 'call_readme', name: 'lookup_ticket', arguments: '{"ticket_id":"T-1"}' },
              ]),
            ),
          );
        });
      });
      await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
      await executor.ready;
    }, 120_000);

    afterAll(async () => {
      await new Promise((resolve) => model?.close(resolve));
      await stopAndClean(executor, prefix, kafka, redis);
    }, 60_000);

    it('type-checks the two files with strict tsc', async () => {
      const tsc = await runProgram([join(project, 'node_modules/.bin/tsc'), '-p', '.'], { cwd: dir });
      expect(tsc.stdout + tsc.stderr).toBe('');
      expect(tsc.code).toBe(0);
    }, 60_000);

    it('gets SUCCESS on the first call', async () => {
      const { port } = model.address() as AddressInfo;
      const agent = await runProgram(['npx', 'tsx', 'agent.ts'], {
        cwd: dir,
        env: { OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, OPENAI_API_KEY: 'test-key' },
      });
      expect(agent.stderr).toBe('');
      expect(agent.stdout).toBe('lookup_ticket: SUCCESS\n');
      expect(agent.code).toBe(0);
      // The model was offered the catalog's tool, exported for OpenAI by the program.
      expect(modelRequests.map((r) => r.tools?.map((t) => t.function.name))).toEqual([['lookup_ticket']]);
    }, 60_000);
  });
});

const README = fileURLToPath(new URL('../../../README.md', import.meta.url));

/** The section "Your own tools behind toolgate": its files (by first-line name) and shell lines. */
function readmeSteps(): { files: Record<string, string>; shell: string[] } {
  const text = readFileSync(README, 'utf8');
  const start = text.indexOf('## Your own tools behind toolgate');
  const section = text.slice(start, text.indexOf('\n## ', start + 1));
  const files: Record<string, string> = {};
  const shell: string[] = [];
  for (const [, lang, body] of section.matchAll(/```(ts|sh)\n([\s\S]*?)```/g)) {
    if (lang === 'ts') {
      const name = /^\/\/ (\S+\.ts)\n/.exec(body!)?.[1];
      if (name === undefined) throw new Error('a ts block in the section does not start with // <file>.ts');
      files[name] = body!;
    } else if (!body!.startsWith('npm install')) {
      shell.push(
        ...body!
          .replace(/\\\n\s*/g, '')
          .trim()
          .split('\n'),
      );
    }
  }
  return { files, shell };
}

/** `A=1 B=2 cmd args` → its environment and argv (no quoting: the README's lines need none). */
function parseCommand(line: string): { env: Record<string, string>; argv: string[] } {
  const words = line.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Z_]+=/.test(words[0] ?? '')) {
    const [name, ...value] = words.shift()!.split('=');
    env[name!] = value.join('=');
  }
  return { env, argv: words };
}

/** Stops the executor (it must exit 0 on SIGTERM), deletes the run's topics, closes the clients. */
async function stopAndClean(
  executor: ExecutorProcess | undefined,
  prefix: string,
  kafka: TestKafka,
  redis: TestRedis,
): Promise<void> {
  if (executor && executor.child.exitCode === null) executor.child.kill('SIGTERM');
  const exited = await executor?.exited;
  const admin = await kafka.admin();
  const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
  if (topics.length > 0) await admin.deleteTopics({ topics });
  await kafka.close();
  await redis.close();
  expect(exited?.code).toBe(0);
}

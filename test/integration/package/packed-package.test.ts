import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
  describe("README's four steps, as written, from an empty directory", () => {
    const prefix = uniqueName('tg_readme');
    const kafka = createTestKafka('tg-readme');
    const redis = createTestRedis('tg-readme');
    let dir: string;
    let executor: ExecutorProcess;
    let model: Server;
    const modelRequests: Array<{ tools?: Array<{ function: { name: string } }> }> = [];

    beforeAll(async () => {
      const steps = readmeSteps();
      // The clone's step is what packToolgate ran: plain `npm pack` in a fresh copy (its
      // node_modules linked in place of `npm ci`), so `prepack` had to build it.
      expect(steps.clone).toEqual(['npm ci && npm pack']);
      dir = await makeProject(steps.project, packed.tarball);
      expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))).toMatchObject({
        type: 'module',
        dependencies: { toolgate: expect.stringMatching(/^file:.*toolgate-0\.1\.0\.tgz$/) as unknown },
      });
      writeFileSync(join(dir, 'my-tools.ts'), steps.files['my-tools.ts']!);
      writeFileSync(join(dir, 'agent.ts'), localized(steps.files['agent.ts']!, prefix));

      // Step 3, line 1 exactly; line 2 with this run's servers and isolated names, run through npx.
      const [keysLine, executorLine] = steps.shell;
      expect(keysLine).toBe('npx toolgate keys generate --out keys --kid agent-backend-1');
      const keys = await runProgram(keysLine!.split(' '), { cwd: dir });
      expect(keys.code).toBe(0);
      const { env: readmeEnv, argv } = parseCommand(localized(executorLine!, prefix));
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
        { argv, cwd: dir },
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
    }, 300_000);

    afterAll(async () => {
      await new Promise((resolve) => model?.close(resolve));
      await stopAndClean(executor, prefix, kafka, redis, { exitCode: null });
    }, 60_000);

    it('type-checks the two files with strict tsc', async () => {
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            lib: ['ES2023'],
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            skipLibCheck: false,
            noEmit: true,
            types: ['node'],
            typeRoots: [join(project, 'node_modules/@types')],
          },
          include: ['*.ts'],
        }),
      );
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

    it('stops the executor gracefully when the npx that started it gets SIGTERM', async () => {
      // npx runs the bin through `sh -c`; the service is that shell's child, not npx's.
      const service = descendants(executor.pid).filter((pid) =>
        commandLine(pid).includes('toolgate\0executor'),
      );
      expect(service).toHaveLength(1);
      const closed = new Promise<void>((resolve) => executor.child.once('close', () => resolve()));
      executor.child.kill('SIGTERM');
      await executor.exited;
      // 'close' comes once every holder of the output pipes has exited: the service too.
      await closed;
      expect(executor.output.some((line) => line.includes('"reason":"parent process exited"'))).toBe(true);
      expect(executor.output.some((line) => line.includes('"msg":"stopped"'))).toBe(true);
      expect(running(service[0]!)).toBe(false);
    }, 60_000);
  });

  describe("README's steps in a default `npm init -y` project (CommonJS)", () => {
    let dir: string;
    let steps: ReturnType<typeof readmeSteps>;

    beforeAll(async () => {
      steps = readmeSteps();
      const commonJs = steps.project.map((line) => line.replace(' && npm pkg set type=module', ''));
      expect(commonJs).not.toEqual(steps.project);
      dir = await makeProject(commonJs, packed.tarball);
      expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))).toMatchObject({ type: 'commonjs' });
      writeFileSync(join(dir, 'my-tools.ts'), steps.files['my-tools.ts']!);
      writeFileSync(join(dir, 'agent.ts'), steps.files['agent.ts']!);
      const keys = await runProgram(steps.shell[0]!.split(' '), { cwd: dir });
      expect(keys.code).toBe(0);
    }, 300_000);

    it('the executor stops with the one-line hint, before connecting anywhere', async () => {
      const { env, argv } = parseCommand(localized(steps.shell[1]!, uniqueName('tg_cjs')));
      const out = await runProgram(argv, { cwd: dir, env });
      expect(out.stderr).toBe(
        'toolgate executor: catalog module ./my-tools.ts: cannot load it: your project must be an ES module: ' +
          'add "type": "module" to package.json, or name the file .mts\n',
      );
      expect(out.code).toBe(1);
    }, 60_000);

    it('the agent script does not compile, as the README says', async () => {
      const agent = await runProgram(['npx', 'tsx', 'agent.ts'], { cwd: dir });
      expect(agent.code).not.toBe(0);
      expect(agent.stderr).toContain(
        'Top-level await is currently not supported with the "cjs" output format',
      );
    }, 60_000);
  });
});

const README = fileURLToPath(new URL('../../../README.md', import.meta.url));

/** Every process below `pid` (children, their children…), from /proc. */
function descendants(pid: number): number[] {
  const children = readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
  );
  return children.flatMap((child) => [child, ...descendants(child)]);
}

/** The NUL-separated command line of process `pid`; empty once it has gone. */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** Whether process `pid` is still running (a zombie awaiting its reaper has exited). */
function running(pid: number): boolean {
  if (!existsSync(`/proc/${pid}/stat`)) return false;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

/** The servers of this test run and its own names, in place of the README's defaults. */
function localized(text: string, prefix: string): string {
  return text
    .replaceAll('127.0.0.1:19092', kafkaBrokers().join(','))
    .replaceAll('http://127.0.0.1:18081/apis/ccompat/v7', schemaRegistryUrl())
    .replaceAll('redis://127.0.0.1:6379', REDIS_URL)
    .replaceAll("topicNames('toolgate')", `topicNames('${prefix}')`);
}

/**
 * Runs the README's project lines (mkdir, npm init, npm install of the tarball) as one shell
 * script in a fresh empty directory, the tarball's path in place of `/path/to/…`; resolves with the
 * project directory the script made. npm's cache is preferred (configuration from the environment,
 * the lines unchanged).
 */
async function makeProject(lines: readonly string[], tarball: string): Promise<string> {
  const parent = mkdtempSync(join(tmpdir(), 'tg-readme-'));
  const script = lines.join('\n').replaceAll('/path/to/toolgate-0.1.0.tgz', tarball);
  expect(script).toContain(tarball);
  const made = await runProgram(['sh', '-e', '-c', script], {
    cwd: parent,
    env: { npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' },
    timeoutMs: 240_000,
  });
  expect(made.code, made.stderr).toBe(0);
  const dir = join(parent, /^mkdir (\S+)/.exec(lines[0]!)![1]!);
  expect(existsSync(join(dir, 'node_modules/toolgate/dist/libs/index.js'))).toBe(true);
  return dir;
}

/**
 * The section "Your own tools behind toolgate": its files (by first-line name), the shell block run
 * in a clone (`clone`), the one that makes the project (`project`) and the remaining shell lines.
 */
function readmeSteps(): {
  files: Record<string, string>;
  clone: string[];
  project: string[];
  shell: string[];
} {
  const text = readFileSync(README, 'utf8');
  const start = text.indexOf('## Your own tools behind toolgate');
  const section = text.slice(start, text.indexOf('\n## ', start + 1));
  const files: Record<string, string> = {};
  const blocks: string[][] = [];
  for (const [, lang, body] of section.matchAll(/```(ts|sh)\n([\s\S]*?)```/g)) {
    if (lang === 'ts') {
      const name = /^\/\/ (\S+\.ts)\n/.exec(body!)?.[1];
      if (name === undefined) throw new Error('a ts block in the section does not start with // <file>.ts');
      files[name] = body!;
    } else {
      blocks.push(
        body!
          .replace(/\\\n\s*/g, '')
          .trim()
          .split('\n')
          .map((line) => line.replace(/\s+#.*$/, '')),
      );
    }
  }
  const [clone, project, ...rest] = blocks;
  return { files, clone: clone!, project: project!, shell: rest.flat() };
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

/**
 * Stops the executor (it must exit `expected.exitCode`, default 0, on SIGTERM; null: any), deletes
 * the run's topics, closes the clients.
 */
async function stopAndClean(
  executor: ExecutorProcess | undefined,
  prefix: string,
  kafka: TestKafka,
  redis: TestRedis,
  expected: { readonly exitCode: number | null } = { exitCode: 0 },
): Promise<void> {
  if (executor && executor.child.exitCode === null) executor.child.kill('SIGTERM');
  const exited = await executor?.exited;
  const admin = await kafka.admin();
  const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
  if (topics.length > 0) await admin.deleteTopics({ topics });
  await kafka.close();
  await redis.close();
  if (expected.exitCode !== null) expect(exited?.code).toBe(expected.exitCode);
}

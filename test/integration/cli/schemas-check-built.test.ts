import { SchemaRegistry, SchemaType, COMPATIBILITY } from '@kafkajs/confluent-schema-registry';
import { execFile } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryEventCodec } from '../../../libs/events/registry-codec.js';
import { schemasDir } from '../../../libs/events/schema-files.js';
import { topicNames, valueSubject } from '../../../libs/events/topics.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import { schemaRegistryUrl } from '../../helpers/env.js';
import { uniqueName } from '../../helpers/names.js';

/**
 * `schemas check --registry` as users run it, in separate processes: `npm run schemas:check` (tsx on
 * services/cli/schemas-check.ts, in the source tree) and the built bin (dist/services/cli/main.js,
 * compiled once into a temp package laid out like an installed one, run from a directory that is
 * not a git checkout). Both must judge a change against the real registry the same way.
 */
const root = join(import.meta.dirname, '..', '..', '..');
let temp: string;
/** The temp package: package.json, dist/ (tsc output plus the build's assets), node_modules. */
let bin: string;
/** A working directory outside any git checkout. */
let outside: string;

beforeAll(async () => {
  temp = realpathSync(mkdtempSync(join(tmpdir(), 'toolgate-built-')));
  const pkg = join(temp, 'pkg');
  const dist = join(pkg, 'dist');
  // Emit only: the JavaScript is the same as `npm run build`'s, type checking is the typecheck's job.
  await run(join(root, 'node_modules', '.bin', 'tsc'), [
    '-p',
    'tsconfig.build.json',
    '--outDir',
    dist,
    '--noCheck',
    '--declaration',
    'false',
    '--sourceMap',
    'false',
  ]).then(expectSuccess);
  await run(join(root, 'node_modules', '.bin', 'tsx'), ['deploy/copy-build-assets.ts', dist]).then(
    expectSuccess,
  );
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'toolgate', type: 'module' }));
  symlinkSync(join(root, 'node_modules'), join(pkg, 'node_modules'), 'dir');
  bin = join(dist, 'services', 'cli', 'main.js');
  outside = join(temp, 'work');
  mkdirSync(outside);
});

afterAll(() => {
  if (temp !== undefined) rmSync(temp, { recursive: true, force: true });
});

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program to its end; a non-zero exit is a result, not an exception. */
function run(file: string, args: readonly string[], cwd = root): Promise<Run> {
  return new Promise((resolve) => {
    // Only PATH from the environment: a developer's SCHEMA_REGISTRY_URL or topic prefix never leaks in.
    execFile(
      file,
      args,
      { cwd, env: { PATH: process.env.PATH }, encoding: 'utf8' },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function expectSuccess(r: Run): void {
  if (r.code !== 0) throw new Error(`build step exited ${r.code}: ${r.stderr}${r.stdout}`);
}

/** `npm run schemas:check -- …`: tsx on the source file, in the source tree. */
function fromSource(args: readonly string[]): Promise<Run> {
  return run(join(root, 'node_modules', '.bin', 'tsx'), ['services/cli/schemas-check.ts', ...args]);
}

/** The built bin, run with node from outside any checkout. */
function fromBuild(args: readonly string[]): Promise<Run> {
  return run(process.execPath, [bin, 'schemas', 'check', ...args], outside);
}

type Field = { name: string };

/** The package's audit schema with one field taken out: what an older release would have registered. */
function auditSchemaWithout(field: string): string {
  const schema = JSON.parse(readFileSync(join(schemasDir(), 'audit-record.avsc'), 'utf8')) as {
    fields: Field[];
  };
  const fields = schema.fields.filter((f) => f.name !== field);
  expect(fields).toHaveLength(schema.fields.length - 1);
  return JSON.stringify({ ...schema, fields });
}

/** Registers `schema` as the audit subject's only version, under BACKWARD (as the executors set it). */
async function registerAudit(prefix: string, schema: string): Promise<string> {
  const subject = valueSubject(topicNames(prefix).audit);
  await new SchemaRegistry({ host: schemaRegistryUrl() }).register(
    { type: SchemaType.AVRO, schema },
    { subject, compatibility: COMPATIBILITY.BACKWARD },
  );
  return subject;
}

/** stdout without the line naming the schema directory, which differs between the two runs. */
function verdictLines(r: Run): string {
  return r.stdout
    .split('\n')
    .filter((l) => !l.startsWith('schemas: '))
    .join('\n');
}

describe('npm run schemas:check and the built bin agree against the registry', () => {
  it('both refuse a breaking change (exit 1), naming the subject and the field', async () => {
    const prefix = uniqueName('schemas_break');
    // Registered without `tool`; the package's schema adds it with no default: older events lack it.
    const subject = await registerAudit(prefix, auditSchemaWithout('tool'));
    const args = ['--registry', schemaRegistryUrl(), '--prefix', prefix];
    const [source, built] = await Promise.all([fromSource(args), fromBuild(args)]);
    for (const r of [source, built]) {
      expect(r.code).toBe(EXIT.failure);
      expect(r.stdout).toMatch(new RegExp(`^${escape(subject)} +1 +incompatible$`, 'm'));
      expect(r.stdout).toMatch(new RegExp(`^  ${escape(subject)}: .*AuditRecord\\.tool\\b`, 'm'));
      expect(r.stdout).toContain('FAIL: a schema change would break readers of older events.');
    }
    expect(source.stdout).toContain(`schemas: ${schemasDir()}`);
    expect(built.stdout).toContain(`schemas: ${join(temp, 'pkg', 'dist', 'schemas')}`);
    expect(verdictLines(built)).toBe(verdictLines(source));
  });

  it('both accept a compatible change (exit 0)', async () => {
    const prefix = uniqueName('schemas_compat');
    // Registered without `toolVersion`; the package's schema adds it with a default: compatible.
    const subject = await registerAudit(prefix, auditSchemaWithout('toolVersion'));
    const args = ['--registry', schemaRegistryUrl(), '--prefix', prefix];
    const [source, built] = await Promise.all([fromSource(args), fromBuild(args)]);
    for (const r of [source, built]) {
      expect(r.code).toBe(EXIT.ok);
      expect(r.stdout).toMatch(new RegExp(`^${escape(subject)} +1 +compatible$`, 'm'));
      expect(r.stdout).toContain('OK: every schema is backward compatible.');
    }
    expect(verdictLines(built)).toBe(verdictLines(source));
  });
});

describe('the built bin outside a git checkout', () => {
  it('without --registry: a usage error (exit 2) saying to give --registry, not a git error', async () => {
    // The premise: the working directory and the package are outside every git checkout.
    const probe = await run('git', ['rev-parse', '--show-toplevel'], outside);
    expect(probe.code).not.toBe(0);
    const r = await fromBuild([]);
    expect(r.code).toBe(EXIT.usage);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `toolgate: the schemas in ${join(temp, 'pkg', 'dist', 'schemas')} are not in a git checkout, so there is no history to check them against.\n` +
        "Give --registry <url> to check this package's schemas against the subjects in the schema registry.\n",
    );
  });

  it('with --registry: checks the subjects holding its schemas (exit 0)', async () => {
    const prefix = uniqueName('schemas_outside');
    await RegistryEventCodec.create({ url: schemaRegistryUrl(), topics: topicNames(prefix) });
    const r = await fromBuild(['--registry', schemaRegistryUrl(), '--prefix', prefix, '--json']);
    expect(r.code).toBe(EXIT.ok);
    expect(r.stderr).toBe('');
    const body = JSON.parse(r.stdout) as {
      ok: boolean;
      baseline: string;
      schemas: string;
      registry: { subject: string; verdict: { status: string } }[];
    };
    expect(body).toMatchObject({
      ok: true,
      baseline: 'registry',
      schemas: join(temp, 'pkg', 'dist', 'schemas'),
    });
    expect(body.registry.map((c) => [c.subject, c.verdict.status])).toEqual(
      Object.values(topicNames(prefix)).map((t) => [valueSubject(t), 'compatible']),
    );
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

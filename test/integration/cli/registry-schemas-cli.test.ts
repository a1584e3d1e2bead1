import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topicNames, valueSubject } from '../../../libs/events/topics.js';
import { RegistryEventCodec } from '../../../libs/events/registry-codec.js';
import { MemoryJobStore } from '../../../libs/adapters/memory/index.js';
import { patternTools, storeTools } from '../../../services/catalog/index.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import { schemaRegistryUrl } from '../../helpers/env.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { cli } from '../../unit/cli/capture.js';
import { databaseUrlFor } from './cli-env.js';

/**
 * `registry export` with the catalog the executor loads (the store catalog over Postgres, through
 * the same module loader), and `schemas check --registry` against the real schema registry.
 */
let db: TestSchema;

beforeAll(async () => {
  db = await createTestSchema('cli_registry');
});
afterAll(async () => {
  await db.drop();
});

describe('registry export from the executor catalog', () => {
  it('exports the store catalog the way the executor loads it (default module)', async () => {
    const r = await cli(['registry', 'export', '--format', 'openai', '--strict'], {
      env: { DATABASE_URL: databaseUrlFor(db.schema) },
    });
    expect(r.code).toBe(EXIT.ok);
    const tools = r.json<{ type: string; function: { name: string; strict: boolean } }[]>();
    // Built independently here from the catalog's own lists: with no optional backend configured,
    // the executor's catalog is the core store tools plus the report-job tools.
    const clock = { now: () => 0, sleep: () => Promise.resolve() };
    const unconfigured = { jobs: new MemoryJobStore(), close: () => Promise.resolve() };
    const expected = [
      ...storeTools({} as never, clock),
      ...patternTools(unconfigured, {} as never, clock, () => 'v'),
    ]
      .map((t) => t.name)
      .sort();
    expect(tools.map((t) => t.function.name)).toEqual(expected);
    expect(tools.every((t) => t.type === 'function' && t.function.strict)).toBe(true);
    expect(r.stderr).toBe(`exported ${expected.length} tools for openai (strict)\n`);
  });

  it('a catalog module given with --catalog is loaded relative to the working directory', async () => {
    const r = await cli(
      ['registry', 'export', '--format', 'anthropic', '--catalog', './services/catalog/index.ts'],
      {
        env: { DATABASE_URL: databaseUrlFor(db.schema) },
        cwd: `${import.meta.dirname}/../../..`,
      },
    );
    expect(r.code).toBe(EXIT.ok);
    expect(r.json<{ name: string }[]>().map((t) => t.name)).toContain('issue_refund');
  });
});

describe('schemas check --registry', () => {
  it('passes for subjects not registered yet and for subjects holding these schemas', async () => {
    const prefix = uniqueName('cli');
    const args = ['schemas', 'check', '--registry', schemaRegistryUrl(), '--prefix', prefix, '--json'];
    const fresh = await cli(args);
    expect(fresh.code).toBe(EXIT.ok);
    const before = fresh.json<{
      ok: boolean;
      registry: { subject: string; verdict: { status: string } }[];
    }>();
    expect(before.registry.map((r) => [r.subject, r.verdict.status])).toEqual(
      Object.values(topicNames(prefix)).map((t) => [valueSubject(t), 'not-registered']),
    );

    await RegistryEventCodec.create({ url: schemaRegistryUrl(), topics: topicNames(prefix) });
    const registered = await cli(args);
    expect(registered.code).toBe(EXIT.ok);
    expect(registered.json<typeof before>().registry.map((r) => r.verdict.status)).toEqual([
      'compatible',
      'compatible',
      'compatible',
      'compatible',
    ]);
  });

  it('fails (exit 1) when the registry holds a version this schema cannot read', async () => {
    const prefix = uniqueName('cli');
    const subject = valueSubject(topicNames(prefix).audit);
    // An unrelated record under the audit subject: events written with it are unreadable by ours.
    await new SchemaRegistry({ host: schemaRegistryUrl() }).register(
      {
        type: SchemaType.AVRO,
        schema: JSON.stringify({ type: 'record', name: 'Unrelated', fields: [{ name: 'x', type: 'int' }] }),
      },
      { subject },
    );
    const r = await cli(['schemas', 'check', '--registry', schemaRegistryUrl(), '--prefix', prefix]);
    expect(r.code).toBe(EXIT.failure);
    expect(r.stdout).toMatch(new RegExp(`${subject.replace(/\./g, '\\.')} +1 +incompatible`));
    // The registry gives no reason; the local Avro resolution against version 1 names one.
    expect(r.stdout).toContain(`  ${subject}: against version 1: events written with the previous schema`);
    expect(r.stdout).toContain('FAIL: a schema change would break readers of older events.');
  });

  it('a URL that is not the compatible API fails (exit 1) instead of finding nothing registered', async () => {
    const r = await cli([
      'schemas',
      'check',
      '--registry',
      // The server's root instead of its Confluent-compatible API (/apis/ccompat/v7 on Apicurio):
      // the mistake this guards against. (Apicurio leaves some unknown paths under the API unanswered.)
      new URL(schemaRegistryUrl()).origin,
      '--prefix',
      uniqueName('cli'),
    ]);
    expect(r.code).toBe(EXIT.failure);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('answered 404');
    expect(r.stderr).toContain('without a "subject not found" code');
    expect(r.stderr).toContain('Give the Confluent-compatible API base URL');
  });

  it('says when no subject under the prefix is registered, so a wrong --prefix is visible', async () => {
    const prefix = uniqueName('cli');
    const r = await cli(['schemas', 'check', '--registry', schemaRegistryUrl(), '--prefix', prefix]);
    expect(r.code).toBe(EXIT.ok);
    expect(r.stderr).toBe(
      `note: no subject under prefix '${prefix}' is registered at ${schemaRegistryUrl()}, so nothing was compared; check --prefix.\n`,
    );
  });
});

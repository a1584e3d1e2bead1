import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import { createLogger } from '../../../libs/observability/logger.js';
import { loadAuditSinkConfig } from '../../../services/audit-sink/config.js';
import { createAuditSinkService } from '../../../services/audit-sink/service.js';
import type { Service } from '../../../libs/runtime/service.js';
import { DATABASE_URL } from '../../helpers/env.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { auditEvent } from './audit-events.js';
import { createEventStack, eventually, serviceEnvOn, type EventStack } from './event-stack.js';

/**
 * The audit sink runs as the least role its migration recommends — INSERT and SELECT on
 * audit_records (plus SELECT on schema_migrations to check the schema version), not the owner, no
 * CREATE on the schema — while migrations run with the owner role: once through
 * DATABASE_MIGRATION_URL at the sink's start, once ahead of time (a migration job).
 */

let stack: EventStack;
const schemas: TestSchema[] = [];
const roles: string[] = [];
const services: Service[] = [];

beforeAll(async () => {
  stack = await createEventStack('sink_least');
});

afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await stack.close();
  for (const db of schemas) await db.drop();
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  try {
    for (const role of roles) {
      await admin.query(`DROP OWNED BY "${role}"`);
      await admin.query(`DROP ROLE "${role}"`);
    }
  } finally {
    await admin.end();
  }
});

/** `DATABASE_URL` as another role, with the connection's search_path set to `schema`. */
function urlFor(schema: string, role?: string): string {
  const url = new URL(DATABASE_URL);
  if (role !== undefined) {
    url.username = role;
    url.password = '';
  }
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/**
 * A login role with USAGE on the schema and nothing else, and the owner's future tables in it
 * readable and appendable by the role (what an operator grants once).
 */
async function leastRole(db: TestSchema): Promise<string> {
  const role = uniqueName('tg_sink_role');
  roles.push(role);
  await db.pool.query(`CREATE ROLE "${role}" LOGIN`);
  await db.pool.query(`GRANT USAGE ON SCHEMA "${db.schema}" TO "${role}"`);
  return role;
}

async function startSink(env: Record<string, string>, lines: string[]): Promise<void> {
  const service = createAuditSinkService(
    loadAuditSinkConfig({
      ...env,
      AUDIT_SINK_GROUP_ID: uniqueName('least_sinks'),
      AUDIT_SINK_ID: 'sink-least',
    }),
    {
      logger: createLogger({
        level: 'info',
        name: 'audit-sink',
        destination: { write: (line: string) => void lines.push(line) },
      }),
    },
  );
  services.push(service);
  await service.start();
}

function sinkEnv(db: TestSchema): Record<string, string> {
  return serviceEnvOn(stack, db.schema);
}

async function storedCount(db: TestSchema, recordId: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM audit_records WHERE record_id = $1',
    [recordId],
  );
  return rows[0]!.n;
}

describe('the audit sink as a least-privilege role', () => {
  it('starts after the owner migrated through DATABASE_MIGRATION_URL, and stores records', async () => {
    const db = await createTestSchema('sink_least_a');
    schemas.push(db);
    const role = await leastRole(db);
    await db.pool.query(
      `ALTER DEFAULT PRIVILEGES IN SCHEMA "${db.schema}" GRANT SELECT, INSERT ON TABLES TO "${role}"`,
    );
    const lines: string[] = [];
    await startSink(
      { ...sinkEnv(db), DATABASE_URL: urlFor(db.schema, role), DATABASE_MIGRATION_URL: urlFor(db.schema) },
      lines,
    );
    const recordId = uniqueName('least_rec');
    await stack.publish('audit', [{ key: 't-least', event: auditEvent(recordId, 't-least', 1) }]);
    await eventually('the stored record', async () => (await storedCount(db, recordId)) === 1);
    // The running sink's role owns nothing and cannot change the schema.
    const owners = await db.pool.query<{ tableowner: string }>(
      'SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = $1',
      [db.schema],
    );
    expect(owners.rows.map((r) => r.tableowner)).not.toContain(role);
  }, 60_000);

  it('starts on a schema migrated ahead of time, with no DDL of its own', async () => {
    const db = await createTestSchema('sink_least_b');
    schemas.push(db);
    const role = await leastRole(db);
    await migrate(db.pool);
    await db.pool.query(`GRANT SELECT, INSERT ON audit_records TO "${role}"`);
    await db.pool.query(`GRANT SELECT ON schema_migrations TO "${role}"`);
    const lines: string[] = [];
    await startSink({ ...sinkEnv(db), DATABASE_URL: urlFor(db.schema, role) }, lines);
    const recordId = uniqueName('least_rec');
    await stack.publish('audit', [{ key: 't-least-b', event: auditEvent(recordId, 't-least-b', 1) }]);
    await eventually('the stored record', async () => (await storedCount(db, recordId)) === 1);
  }, 60_000);

  it('refuses to start, naming the fix, on a schema the least role cannot migrate', async () => {
    const db = await createTestSchema('sink_least_c');
    schemas.push(db);
    const role = await leastRole(db);
    const lines: string[] = [];
    await expect(startSink({ ...sinkEnv(db), DATABASE_URL: urlFor(db.schema, role) }, lines)).rejects.toThrow(
      /DATABASE_MIGRATION_URL/,
    );
  }, 60_000);
});

import pg from 'pg';
import { pino } from 'pino';
import { systemClock } from '../../libs/core/system-clock.js';
import { LegacyFilingConfigError, loadLegacyFilingConfig } from './config.js';
import { LegacyFaults } from './faults.js';
import { ensureLegacyFilingSchema } from './filing-schema.js';
import { startLegacyFilingServer, type LegacyFilingServer } from './server.js';

/**
 * The fake legacy filing service as its own process: `npx tsx services/legacy-filing/main.ts`.
 * Creates its schema and table if missing, listens on loopback, writes one JSON line
 * `{"listening":"http://…"}` to stdout once ready (so a parent process can find a random port), and
 * stops on SIGTERM or SIGINT (exit 0). A failed start exits 1.
 */
async function main(): Promise<void> {
  let config;
  try {
    config = loadLegacyFilingConfig();
  } catch (err) {
    process.stderr.write(`${err instanceof LegacyFilingConfigError ? err.message : String(err)}\n`);
    process.exitCode = 1;
    return;
  }
  const logger = pino({ level: config.logLevel, base: { service: 'legacy-filing' } }, pino.destination(2));
  const admin = new pg.Client({ connectionString: config.databaseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA IF NOT EXISTS "${config.schema}"`);
  } finally {
    await admin.end();
  }
  const pool = new pg.Pool({
    connectionString: config.databaseUrl,
    max: 10,
    options: `-c search_path="${config.schema}"`,
  });
  let server: LegacyFilingServer | undefined;
  const stop = async (signal: string): Promise<void> => {
    logger.info({ signal }, 'stopping');
    await server?.close();
    await pool.end();
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void stop(signal));
  try {
    await ensureLegacyFilingSchema(pool);
    server = await startLegacyFilingServer({
      pool,
      host: config.host,
      port: config.port,
      commitWindowMs: config.commitWindowMs,
      faults: new LegacyFaults(config.faults, config.faultSeed),
      slowMs: config.slowMs,
      clock: systemClock,
      logger,
    });
    process.stdout.write(`${JSON.stringify({ listening: server.url })}\n`);
  } catch (err) {
    logger.error({ err }, 'start failed');
    await pool.end().catch(() => undefined);
    process.exitCode = 1;
  }
}

void main();

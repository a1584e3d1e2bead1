import pg from 'pg';
import { migrate } from '../../libs/adapters/postgres/migrate.js';
import { PostgresJobStore } from '../../libs/adapters/postgres/job-store.js';
import { PostgresApprovalStore } from '../../libs/adapters/postgres/approval-store.js';
import { PostgresSingleUseStore } from '../../libs/adapters/postgres/single-use-store.js';
import { ConfinedFs } from '../../libs/integrations/confined-fs.js';
import { PostgresSubmissionLedger } from '../../libs/integrations/submission-ledger.js';
import type { Clock } from '../../libs/core/clock.js';
import type { StoreCatalogConfig } from './config.js';
import { legacyFilingClient, type PatternBackends } from './pattern-backends.js';
import { ensurePurchaseOrderSchema, PostgresPurchaseOrders } from './tools/purchase-order-postgres.js';
import { READ_DOCUMENT_MAX_BYTES } from './tools/read-document.js';

/** The text documents `read_document` serves; anything else in the folder is refused. */
export const DOCUMENT_EXTENSIONS: readonly string[] = ['.md', '.txt'];

/**
 * The shared backends of server mode, in the schema `pool` points at: toolgate's migrations first
 * (single-use ids, jobs, the status-check send ledger), then the purchasing service's own tables
 * (seeded once). Safe to run from several executors at once (both steps take advisory locks).
 *
 * - Purchase orders only with `config.previewKey` (a random key per executor would refuse tokens
 *   previewed on another one): Postgres single-use store and purchasing service.
 * - Report jobs always: Postgres job store.
 * - `submit_filing` only with `config.legacyFilingUrl`, over the Postgres submission ledger.
 * - `read_document` only with `config.documentsRoot`, which must be an existing directory.
 * - `run_report_query` only with `config.reports`: a pool of its own (max 4 connections, the
 *   configured schema as search_path), ended by `close`.
 *
 * Rejects when the database cannot be prepared or the documents root is not a directory; nothing
 * it opened is left open then.
 */
export async function createPostgresPatternBackends(
  pool: pg.Pool,
  clock: Clock,
  config: StoreCatalogConfig,
): Promise<PatternBackends> {
  await migrate(pool);
  if (config.previewKey !== undefined) await ensurePurchaseOrderSchema(pool);
  const documents =
    config.documentsRoot === undefined
      ? undefined
      : await ConfinedFs.create(config.documentsRoot, {
          maxBytes: READ_DOCUMENT_MAX_BYTES,
          extensions: DOCUMENT_EXTENSIONS,
        });
  const reportsPool =
    config.reports === undefined
      ? undefined
      : new pg.Pool({
          connectionString: config.reports.databaseUrl,
          max: 4,
          ...(config.reports.schema === undefined
            ? {}
            : { options: `-c search_path="${config.reports.schema}"` }),
        });
  let closing: Promise<void> | undefined;
  return {
    jobs: new PostgresJobStore(pool),
    ...(config.previewKey === undefined
      ? {}
      : {
          purchasing: {
            purchaseOrders: new PostgresPurchaseOrders(pool, clock),
            previewKey: config.previewKey,
            singleUse: new PostgresSingleUseStore(pool),
            approvals: new PostgresApprovalStore(pool, clock),
          },
        }),
    ...(config.legacyFilingUrl === undefined
      ? {}
      : {
          filing: {
            client: legacyFilingClient(config.legacyFilingUrl, clock),
            ledger: new PostgresSubmissionLedger(pool),
          },
        }),
    ...(documents === undefined ? {} : { documents }),
    ...(reportsPool === undefined ? {} : { reportsPool }),
    close() {
      closing ??= reportsPool === undefined ? Promise.resolve() : reportsPool.end();
      return closing;
    },
  };
}

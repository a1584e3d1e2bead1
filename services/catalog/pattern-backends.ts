import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { MemoryJobStore } from '../../libs/adapters/memory/job-store.js';
import { MemoryApprovalStore } from '../../libs/adapters/memory/approval-store.js';
import { MemorySingleUseStore } from '../../libs/adapters/memory/single-use-store.js';
import type { ConfinedFs } from '../../libs/integrations/confined-fs.js';
import { MemorySubmissionLedger, type SubmissionLedger } from '../../libs/integrations/submission-ledger.js';
import type { PreviewKey } from '../../libs/patterns/preview/preview-key.js';
import type { Clock } from '../../libs/core/clock.js';
import type { JobStore } from '../../libs/ports/job-store.js';
import type { ApprovalStore } from '../../libs/ports/approval-store.js';
import type { SingleUseStore } from '../../libs/ports/single-use-store.js';
import { LegacyFilingClient } from '../legacy-filing/client.js';
import { MemoryPurchaseOrders, type PurchaseOrderApi } from './tools/purchase-order-backend.js';
import { LEGACY_FILING_TIMING } from './tools/submit-filing.js';

/** The preview/confirm purchase-order backends; present only with a preview key. */
export interface PurchasingBackend {
  readonly purchaseOrders: PurchaseOrderApi;
  /** Signs preview tokens; the same on every executor sharing {@link PurchasingBackend.singleUse}. */
  readonly previewKey: PreviewKey;
  /** Used-token marks. */
  readonly singleUse: SingleUseStore;
  /** Approval requests the confirm records and people decide (the ops console's queue). */
  readonly approvals: ApprovalStore;
}

/** The legacy filing service and the send ledger its status checks rely on. */
export interface FilingBackend {
  readonly client: LegacyFilingClient;
  /** Shared by every executor and the reconciler (Postgres in server mode). */
  readonly ledger: SubmissionLedger;
}

/**
 * What the pattern tools run against, beyond the store's fake services. Each optional part gates
 * its tools: without `purchasing` no purchase-order pair, without `filing` no `submit_filing`,
 * without `documents` no `read_document`, without `reportsPool` no `run_report_query`. The report
 * jobs need only `jobs` (and the payment ledger), so they are always there.
 */
export interface PatternBackends {
  readonly jobs: JobStore;
  readonly purchasing?: PurchasingBackend;
  readonly filing?: FilingBackend;
  readonly documents?: ConfinedFs;
  readonly reportsPool?: pg.Pool;
  /** Releases what these backends own (not what a caller passed in); idempotent. */
  close(): Promise<void>;
}

/** Optional parts of {@link memoryPatternBackends}. */
export interface MemoryPatternOptions {
  /** Default: a random HS256 key (fine for one process: embedded mode, tests). */
  readonly previewKey?: PreviewKey;
  /** Default: an in-memory purchasing service seeded with the story's suppliers. */
  readonly purchaseOrders?: PurchaseOrderApi;
  /** Base URL of a running legacy filing service; unset, `submit_filing` is not registered. */
  readonly legacyFilingUrl?: string;
  /** An opened documents folder; unset, `read_document` is not registered. */
  readonly documents?: ConfinedFs;
  /** A pool reaching `legacy_filings` (the caller owns it); unset, `run_report_query` is not registered. */
  readonly reportsPool?: pg.Pool;
}

/** A legacy filing client with the status-check adapter's submit timeout as its default limit. */
export function legacyFilingClient(baseUrl: string, clock: Clock): LegacyFilingClient {
  return new LegacyFilingClient({ baseUrl, clock, timeoutMs: LEGACY_FILING_TIMING.submitTimeoutMs });
}

/**
 * The single-process backends (embedded mode, demos, unit tests): memory job store, single-use
 * store, purchasing service and submission ledger on `clock`. The purchase-order pair is always
 * available here (a random preview key unless one is given); the other optional tools only with
 * the options that configure them. Nothing is owned that needs closing.
 */
export function memoryPatternBackends(clock: Clock, options: MemoryPatternOptions = {}): PatternBackends {
  const previewKey: PreviewKey = options.previewKey ?? { alg: 'HS256', secret: randomBytes(32) };
  return {
    jobs: new MemoryJobStore(),
    purchasing: {
      purchaseOrders: options.purchaseOrders ?? new MemoryPurchaseOrders(clock),
      previewKey,
      singleUse: new MemorySingleUseStore(clock),
      approvals: new MemoryApprovalStore(clock),
    },
    ...(options.legacyFilingUrl === undefined
      ? {}
      : {
          filing: {
            client: legacyFilingClient(options.legacyFilingUrl, clock),
            ledger: new MemorySubmissionLedger(clock),
          },
        }),
    ...(options.documents === undefined ? {} : { documents: options.documents }),
    ...(options.reportsPool === undefined ? {} : { reportsPool: options.reportsPool }),
    close: async () => undefined,
  };
}

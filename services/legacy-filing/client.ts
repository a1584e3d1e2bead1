import type { Logger } from '../../libs/ports/logger.js';
import { RestClient } from '../../libs/integrations/rest-client.js';
import type { OutboundLimiter } from '../../libs/pipeline/deps.js';
import type { Clock } from '../../libs/core/clock.js';
import { errorForLegacyFault } from './legacy-faults.js';
import {
  isoFromLegacyTimestamp,
  legacyLookupAnswer,
  legacySubmitAnswer,
  legacyTimestampMs,
  type LegacyFilingRecord,
  type LegacyFormCode,
} from './wire.js';

/** The forms, by the names the model sees. */
export const FORM_TYPES = ['vat_return', 'payroll_annual', 'corporate_tax'] as const;
export type FormType = (typeof FORM_TYPES)[number];

const FORM_CODE: Readonly<Record<FormType, LegacyFormCode>> = {
  vat_return: 'VAT3',
  payroll_annual: 'P35',
  corporate_tax: 'CT1',
};

/** The natural key of a filing: who files which form for which quarter (`2025-Q3`). */
export interface FilingKey {
  readonly tenant: string;
  readonly filerId: string;
  readonly formType: FormType;
  readonly period: string;
}

export interface FilingSubmission extends FilingKey {
  readonly filerName: string;
  readonly amountCents: number;
}

/** A stored filing, in the modern vocabulary. */
export interface FilingRecord extends FilingSubmission {
  readonly confirmationNumber: string;
  /** ISO 8601, UTC. */
  readonly receivedAt: string;
  readonly status: 'received';
}

/** Options of {@link LegacyFilingClient}. */
export interface LegacyFilingClientOptions {
  readonly baseUrl: string;
  readonly clock: Clock;
  /** Default limit on one request; the status-check adapter passes tighter ones through signals. */
  readonly timeoutMs: number;
  /** Shared per-request budget under the downstream name `legacy-filing`. */
  readonly outbound?: OutboundLimiter;
  readonly logger?: Logger;
  readonly fetch?: typeof fetch;
}

/** The downstream name of the legacy filing service (breakers, outbound budget, logs). */
export const LEGACY_FILING_DOWNSTREAM = 'legacy-filing';

/**
 * The modern face of the legacy filing service: one place that speaks its wire format
 * (PascalCase, form codes, `2025Q3` periods, `YYYYMMDDhhmmss` stamps, HTTP-200 rejections) and
 * translates its fault codes. Built on the REST client, so transport errors map like every other
 * integration's: a lost connection or timeout is TIMEOUT (outcome unknown), a 503 SERVER_ERROR.
 * It knows nothing of retries or status checks; the status-check adapter does.
 */
export class LegacyFilingClient {
  readonly #rest: RestClient;

  constructor(options: LegacyFilingClientOptions) {
    this.#rest = new RestClient({
      downstream: LEGACY_FILING_DOWNSTREAM,
      baseUrl: options.baseUrl,
      clock: options.clock,
      timeoutMs: options.timeoutMs,
      ...(options.outbound === undefined ? {} : { outbound: options.outbound }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    });
  }

  /** Every filing under `key`, oldest first (empty when none). Read-only. */
  async lookup(key: FilingKey, signal?: AbortSignal): Promise<FilingRecord[]> {
    const answer = await this.#rest.request({
      method: 'GET',
      path: '/filings',
      query: {
        TenantId: key.tenant,
        FilerId: key.filerId,
        FormType: FORM_CODE[key.formType],
        Period: legacyPeriod(key.period),
      },
      auth: { kind: 'none' },
      response: legacyLookupAnswer,
      ...(signal === undefined ? {} : { signal }),
    });
    return answer.Filings.map(modernRecord);
  }

  /**
   * Files once. Not idempotent: a second call files a second time. Rejections throw CALLER_ERROR.
   * With `notAfterMs`, the service records the filing only if it can by then (its `ExpiresAt`).
   */
  async submit(filing: FilingSubmission, notAfterMs?: number, signal?: AbortSignal): Promise<FilingRecord> {
    const answer = await this.#rest.request({
      method: 'POST',
      path: '/filings',
      body: {
        TenantId: filing.tenant,
        FilerId: filing.filerId,
        FilerName: filing.filerName,
        FormType: FORM_CODE[filing.formType],
        Period: legacyPeriod(filing.period),
        AmountCents: filing.amountCents,
        ...(notAfterMs === undefined ? {} : { ExpiresAt: legacyTimestampMs(notAfterMs) }),
      },
      auth: { kind: 'none' },
      response: legacySubmitAnswer,
      ...(signal === undefined ? {} : { signal }),
    });
    if (answer.Result === 'REJECTED') throw errorForLegacyFault(answer.FaultCode);
    return modernRecord(answer.Filing);
  }
}

/** `2025-Q3` → `2025Q3`. */
export function legacyPeriod(period: string): string {
  return period.replace('-', '');
}

function modernRecord(rec: LegacyFilingRecord): FilingRecord {
  const formType = (Object.keys(FORM_CODE) as FormType[]).find((f) => FORM_CODE[f] === rec.FormType);
  return {
    confirmationNumber: rec.ConfirmationNo,
    tenant: rec.TenantId,
    filerId: rec.FilerId,
    filerName: rec.FilerName,
    // A form code this client does not know is kept visible rather than guessed.
    formType: formType ?? (rec.FormType as FormType),
    period: rec.Period.replace(/^(\d{4})Q/, '$1-Q'),
    amountCents: rec.AmountCents,
    receivedAt: isoFromLegacyTimestamp(rec.ReceivedAt),
    status: 'received',
  };
}

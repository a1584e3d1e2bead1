import type { NewFiling } from './filing-store.js';
import {
  LEGACY_FILER_ID,
  LEGACY_FORM_CODES,
  LEGACY_PERIOD,
  legacySubmitBody,
  msFromLegacyTimestampMs,
  type LegacyFaultCode,
} from './wire.js';

/** The largest amount the service accepts: 10^13 cents. */
const MAX_AMOUNT_CENTS = 10_000_000_000_000;

/**
 * The service's field checks, in its own order, with its own fault codes. A period after the current
 * quarter (by `nowMs`) is "not open".
 */
export function validateSubmission(
  body: unknown,
  nowMs: number,
):
  | { readonly ok: true; readonly filing: NewFiling; readonly expiresAtMs?: number }
  | { readonly ok: false; readonly fault: LegacyFaultCode } {
  const parsed = legacySubmitBody.safeParse(body);
  if (!parsed.success || parsed.data.TenantId.length === 0) return { ok: false, fault: 'F100' };
  const b = parsed.data;
  if (!LEGACY_FILER_ID.test(b.FilerId)) return { ok: false, fault: 'F101' };
  if (!(LEGACY_FORM_CODES as readonly string[]).includes(b.FormType)) return { ok: false, fault: 'F104' };
  const period = LEGACY_PERIOD.exec(b.Period);
  if (period === null || !periodOpen(Number(period[1]), Number(period[2]), nowMs)) {
    return { ok: false, fault: 'F102' };
  }
  if (!Number.isSafeInteger(b.AmountCents) || b.AmountCents < 0 || b.AmountCents > MAX_AMOUNT_CENTS) {
    return { ok: false, fault: 'F103' };
  }
  const name = b.FilerName.trim();
  if (name.length === 0 || name.length > 120) return { ok: false, fault: 'F105' };
  const expiresAtMs = b.ExpiresAt === undefined ? undefined : msFromLegacyTimestampMs(b.ExpiresAt);
  if (b.ExpiresAt !== undefined && expiresAtMs === undefined) return { ok: false, fault: 'F100' };
  const { ExpiresAt: _expires, ...fields } = b;
  return {
    ok: true,
    filing: { ...fields, FilerName: name },
    ...(expiresAtMs === undefined ? {} : { expiresAtMs }),
  };
}

/** Filing opens for a quarter once it has begun; earlier quarters stay open. */
function periodOpen(year: number, quarter: number, nowMs: number): boolean {
  const now = new Date(nowMs);
  const current = now.getUTCFullYear() * 4 + Math.floor(now.getUTCMonth() / 3);
  return year * 4 + (quarter - 1) <= current && year >= 1990;
}

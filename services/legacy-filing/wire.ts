import { z } from 'zod';

/**
 * The legacy filing service's own wire format, as it has been for decades: PascalCase fields, form
 * codes instead of names, periods as `2025Q3`, timestamps as `YYYYMMDDhhmmss` (UTC), money in cents,
 * and business rejections answered with HTTP 200 and a fault code. Shared by the fake server and the
 * client that translates it into a modern interface, so the two cannot drift apart.
 */

/** Form codes the service accepts. */
export const LEGACY_FORM_CODES = ['VAT3', 'P35', 'CT1'] as const;
export type LegacyFormCode = (typeof LEGACY_FORM_CODES)[number];

export const LEGACY_PERIOD = /^(\d{4})Q([1-4])$/;
export const LEGACY_FILER_ID = /^\d{9}$/;

/** Business faults (answered 200 with Result REJECTED). */
export const LEGACY_FAULTS = {
  F100: 'MALFORMED REQUEST',
  F101: 'FILER ID INVALID',
  F102: 'PERIOD NOT OPEN',
  F103: 'AMOUNT INVALID',
  F104: 'FORM TYPE UNKNOWN',
  F105: 'FILER NAME INVALID',
} as const;
export type LegacyFaultCode = keyof typeof LEGACY_FAULTS;

/** `POST /filings` body. Loosely typed on purpose: the server validates field by field and faults. */
export const legacySubmitBody = z.object({
  TenantId: z.string(),
  FilerId: z.string(),
  FilerName: z.string(),
  FormType: z.string(),
  Period: z.string(),
  AmountCents: z.number(),
  /**
   * Optional: the instant after which the service must not record this submission, as a UTC stamp
   * with milliseconds (`YYYYMMDDhhmmssfff`). A submission the service cannot record by then is
   * abandoned, however late it got to it — what makes a caller's "not found" after it trustworthy.
   */
  ExpiresAt: z.string().optional(),
});
export type LegacySubmitBody = z.infer<typeof legacySubmitBody>;

/** One stored filing as the service returns it. */
export const legacyFilingRecord = z.object({
  ConfirmationNo: z.string(),
  TenantId: z.string(),
  FilerId: z.string(),
  FilerName: z.string(),
  FormType: z.string(),
  Period: z.string(),
  AmountCents: z.number().int(),
  ReceivedAt: z.string().regex(/^\d{14}$/),
  Status: z.literal('RECEIVED'),
});
export type LegacyFilingRecord = z.infer<typeof legacyFilingRecord>;

/** `POST /filings` answers: 201 ACCEPTED, or 200 REJECTED with a business fault. */
export const legacySubmitAnswer = z.discriminatedUnion('Result', [
  z.object({ Result: z.literal('ACCEPTED'), Filing: legacyFilingRecord }),
  z.object({ Result: z.literal('REJECTED'), FaultCode: z.string(), FaultText: z.string() }),
]);
export type LegacySubmitAnswer = z.infer<typeof legacySubmitAnswer>;

/** `GET /filings?TenantId&FilerId&FormType&Period` answer: every filing under that natural key, oldest first. */
export const legacyLookupAnswer = z.object({ Filings: z.array(legacyFilingRecord) });

/** The lookup query parameters: the natural key. */
export const LEGACY_KEY_PARAMS = ['TenantId', 'FilerId', 'FormType', 'Period'] as const;

/** `YYYYMMDDhhmmss` in UTC. */
export function legacyTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** `YYYYMMDDhhmmssfff` in UTC: a legacy timestamp with milliseconds. */
export function legacyTimestampMs(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:T.Z]/g, '')
    .slice(0, 17);
}

/** Epoch ms from `YYYYMMDDhhmmssfff`; undefined when it is not one. */
export function msFromLegacyTimestampMs(stamp: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{3})$/.exec(stamp);
  if (m === null) return undefined;
  const ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, +m[7]!);
  return Number.isFinite(ms) ? ms : undefined;
}

/** ISO 8601 from a legacy timestamp. */
export function isoFromLegacyTimestamp(stamp: string): string {
  const [y, mo, d, h, mi, s] = [0, 4, 6, 8, 10, 12].map((i, k) => stamp.slice(i, i + (k === 0 ? 4 : 2)));
  return `${y}-${mo}-${d}T${h}:${mi}:${s}.000Z`;
}

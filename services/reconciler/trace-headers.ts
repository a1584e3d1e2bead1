import { randomBytes } from 'node:crypto';

/**
 * A W3C `traceparent` continuing the call's trace with a new span of the reconciler's, so what it
 * publishes joins the call's trace; no header when the call has no valid trace id.
 */
export function traceHeaders(traceId: string): Record<string, string> {
  if (!/^[0-9a-f]{32}$/.test(traceId) || /^0+$/.test(traceId)) return {};
  return { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
}

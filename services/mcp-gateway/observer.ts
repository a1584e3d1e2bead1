/** The MCP methods the gateway reports by name; any other method is reported as `other`. */
export const REPORTED_METHODS = [
  'initialize',
  'server/discover',
  'ping',
  'tools/list',
  'tools/call',
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
  'notifications',
  'other',
] as const;
export type ReportedMethod = (typeof REPORTED_METHODS)[number];

/** How one MCP request ended, as metrics and audit record it (a closed set). */
export const REQUEST_OUTCOMES = [
  'ok',
  'tool-success',
  'tool-duplicate',
  'tool-refused',
  'tool-failed',
  'tool-unknown-outcome',
  'task-created',
  'confirmation-required',
  'unauthenticated',
  'forbidden',
  'rejected',
  'error',
] as const;
export type RequestOutcome = (typeof REQUEST_OUTCOMES)[number];

/** One MCP request as the gateway saw it: what audit and metrics are made of. Holds no token. */
export interface McpRequestRecord {
  readonly method: ReportedMethod;
  readonly outcome: RequestOutcome;
  /** The protocol revision the request was served at (`unknown` before it could be read). */
  readonly protocolVersion: string;
  /** The client's self-reported name (`unknown` when it sent none on this request). */
  readonly clientName: string;
  readonly principalId?: string;
  readonly tenant?: string;
  readonly tool?: string;
  /** toolgate's outcome of a tools/call that reached toolgate. */
  readonly toolOutcome?: string;
  /**
   * The toolgate call id of a tools/call that was published (the executor audits it under this id);
   * for a `tasks/*` request, the task's id, which is that call id.
   */
  readonly callId?: string;
  /** The trace of a tools/call that was published. */
  readonly traceId?: string;
  readonly idempotencyKey?: string;
  /** Why a request was refused (OAuth error code or toolgate error code). */
  readonly reason?: string;
  readonly durationMs: number;
}

/** Receives every record; must not throw (errors are logged and dropped by the gateway). */
export type McpRequestObserver = (record: McpRequestRecord) => void;

/** The reported method of a JSON-RPC method name. */
export function reportedMethod(method: unknown): ReportedMethod {
  if (typeof method !== 'string') return 'other';
  if (method.startsWith('notifications/')) return 'notifications';
  return (REPORTED_METHODS as readonly string[]).includes(method) ? (method as ReportedMethod) : 'other';
}

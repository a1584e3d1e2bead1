import type { IncomingHttpHeaders } from 'node:http';
import { reportedMethod, type ReportedMethod } from './observer.js';

const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_INFO_META = 'io.modelcontextprotocol/clientInfo';

/** What the gateway reads of a request for audit and metrics before the SDK serves it. */
export interface RequestFacts {
  readonly method: ReportedMethod;
  readonly protocolVersion: string;
  readonly clientName: string;
  readonly tool?: string;
}

/**
 * The method, protocol revision and client name of one HTTP request to the MCP endpoint, from its
 * parsed JSON-RPC body (when there is one) and headers. 2026-07-28 requests carry revision and
 * client in `_meta`; 2025 requests carry the revision in `MCP-Protocol-Version` (or, on
 * `initialize`, in the params, with the client info). Values are bounded to 100 characters so a
 * client cannot make an audit record large. Pure and total.
 */
export function requestFacts(body: unknown, headers: IncomingHttpHeaders): RequestFacts {
  const message = (Array.isArray(body) ? body[0] : body) as Record<string, unknown> | undefined;
  const params: Record<string, unknown> = isRecord(message?.params) ? message.params : {};
  const meta = isRecord(params._meta) ? params._meta : {};
  const clientInfo = isRecord(meta[CLIENT_INFO_META])
    ? meta[CLIENT_INFO_META]
    : isRecord(params.clientInfo)
      ? params.clientInfo
      : {};
  const version =
    meta[PROTOCOL_VERSION_META] ??
    header(headers, 'mcp-protocol-version') ??
    (message?.method === 'initialize' ? params.protocolVersion : undefined);
  const tool = message?.method === 'tools/call' && typeof params.name === 'string' ? params.name : undefined;
  return {
    method: reportedMethod(message?.method ?? header(headers, 'mcp-method')),
    protocolVersion: bounded(version),
    clientName: bounded(clientInfo.name),
    ...(tool === undefined ? {} : { tool: tool.slice(0, 100) }),
  };
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

function bounded(value: unknown): string {
  return typeof value === 'string' && value !== '' ? value.slice(0, 100) : 'unknown';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

import { Counter, Histogram, type Registry } from 'prom-client';
import type { McpRequestObserver } from './observer.js';

/**
 * Prometheus series of the gateway, with closed label sets (method from REPORTED_METHODS,
 * outcome from REQUEST_OUTCOMES; no tool, client or principal labels, which clients choose):
 * - `toolgate_mcp_requests_total{method,outcome}`
 * - `toolgate_mcp_request_duration_seconds{method}`
 * Returns the observer that feeds them.
 */
export function mcpMetrics(registry: Registry): McpRequestObserver {
  const requests = new Counter({
    name: 'toolgate_mcp_requests_total',
    help: 'MCP requests by method and how they ended.',
    labelNames: ['method', 'outcome'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'toolgate_mcp_request_duration_seconds',
    help: 'Time from an MCP request to its finished response, by method.',
    labelNames: ['method'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return (record) => {
    requests.inc({ method: record.method, outcome: record.outcome });
    duration.observe({ method: record.method }, record.durationMs / 1000);
  };
}

/**
 * `toolgate_mcp_audit_failures_total`: gateway audit records given up after their retries — lost
 * from the audit log (the request is still in the log line and the request metrics). Returns the
 * hook that counts one (the gateway's `onAuditLost`).
 */
export function mcpAuditFailures(registry: Registry): () => void {
  const failures = new Counter({
    name: 'toolgate_mcp_audit_failures_total',
    help: 'Audit records of MCP requests the gateway gave up publishing (lost from the audit log).',
    registers: [registry],
  });
  return () => failures.inc();
}

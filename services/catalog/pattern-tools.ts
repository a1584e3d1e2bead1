import { PreviewGate } from '../../libs/patterns/preview/preview-gate.js';
import type { Clock } from '../../libs/core/clock.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import type { StoreDownstreams } from '../downstreams/store-downstreams.js';
import type { PatternBackends } from './pattern-backends.js';
import { purchaseOrderTools } from './tools/purchase-order-tools.js';
import { readDocumentTool } from './tools/read-document.js';
import { reportJobTools } from './tools/report-job-tools.js';
import { runReportQueryTool } from './tools/run-report-query.js';
import { submitFilingTool } from './tools/submit-filing.js';

/**
 * The enterprise-pattern tools over their backends, in a fixed order: the report-job trio
 * (always), the purchase-order pair (with `backends.purchasing`), `submit_filing` (with
 * `backends.filing`), `read_document` (with `backends.documents`), `run_report_query` (with
 * `backends.reportsPool`). A part that is not configured leaves its tools out rather than
 * registering tools that could only fail. `policyVersion` is read on every preview and confirm, so
 * a policy change invalidates outstanding preview tokens.
 */
export function patternTools(
  backends: PatternBackends,
  downstreams: StoreDownstreams,
  clock: Clock,
  policyVersion: () => string,
): ToolDefinition[] {
  const tools: ToolDefinition[] = [
    ...reportJobTools({ jobs: backends.jobs, payments: downstreams.payments, clock }),
  ];
  const purchasing = backends.purchasing;
  if (purchasing !== undefined) {
    tools.push(
      ...purchaseOrderTools({
        inventory: downstreams.inventory,
        purchaseOrders: purchasing.purchaseOrders,
        gate: new PreviewGate({
          key: purchasing.previewKey,
          store: purchasing.singleUse,
          approvals: purchasing.approvals,
          clock,
        }),
        policyVersion,
      }),
    );
  }
  if (backends.filing !== undefined) {
    tools.push(
      submitFilingTool({
        client: backends.filing.client,
        ledger: backends.filing.ledger,
        clock,
      }) as unknown as ToolDefinition,
    );
  }
  if (backends.documents !== undefined) {
    tools.push(readDocumentTool({ documents: backends.documents }) as unknown as ToolDefinition);
  }
  if (backends.reportsPool !== undefined) {
    tools.push(runReportQueryTool({ pool: backends.reportsPool }) as unknown as ToolDefinition);
  }
  return tools;
}

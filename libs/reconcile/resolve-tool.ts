import type { ToolResolver } from '../pipeline/deps.js';
import type { ReconciliationCase } from '../ports/case-store.js';
import { ranToolVersion, type CaseRequest } from './case-request.js';
import type { ToolDefinition } from '../registry/tool-definition.js';

/**
 * The definition a case's call is reconciled against, for the call's tenant: the version it ran (or
 * pinned), else the current version — the one that ran may have been deprecated since, and its
 * successor reads the same downstream (a status check has no side effects; output rules are the
 * successor's). `why` is the registry's reason when neither resolves.
 */
export function resolveCaseTool(
  tools: ToolResolver,
  c: Pick<ReconciliationCase, 'lastKnownState'>,
  request: CaseRequest,
): { readonly ok: true; readonly tool: ToolDefinition } | { readonly ok: false; readonly why: string } {
  const version = ranToolVersion(c, request);
  const pinned = tools.resolve(request.tool, {
    tenant: request.tenant,
    ...(version === undefined ? {} : { version }),
  });
  if (pinned.ok) return pinned;
  if (version !== undefined) {
    const current = tools.resolve(request.tool, { tenant: request.tenant });
    if (current.ok) return current;
  }
  return { ok: false, why: pinned.error.message };
}

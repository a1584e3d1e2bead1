import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { createPurchaseOrderTool } from './purchase-order-create.js';
import { previewPurchaseOrderTool } from './purchase-order-preview.js';
import type { PurchaseOrderToolDeps } from './purchase-order-shared.js';

/**
 * The purchase-order pair: `preview_purchase_order` then
 * `create_purchase_order`, sharing one PreviewGate, inventory and purchasing service. Register both
 * or neither: the confirm is unusable without its preview.
 */
export function purchaseOrderTools(deps: PurchaseOrderToolDeps): ToolDefinition[] {
  return [previewPurchaseOrderTool(deps), createPurchaseOrderTool(deps)] as ToolDefinition[];
}

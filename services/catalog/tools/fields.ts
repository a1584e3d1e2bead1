import { z } from 'zod';

/**
 * Parameter schemas shared by several tools. Each description carries the constraint the model must
 * respect, because lengths and patterns do not all survive every provider's export.
 */
export const orderIdField = z
  .string()
  .regex(/^O-\d{3,10}$/)
  .describe(
    "The order id exactly as the customer or an earlier tool result gave it: 'O-' then 3-10 digits, e.g. 'O-5512'. Never guess or construct one.",
  );

export const customerIdField = z
  .string()
  .regex(/^C-\d{1,10}$/)
  .describe(
    "The customer id from lookup_order or search_customers: 'C-' then digits, e.g. 'C-1'. Not a name or an email.",
  );

export const skuField = z
  .string()
  .regex(/^SKU-\d{1,8}$/)
  .describe("The stock keeping unit exactly as an order line shows it: 'SKU-' then digits, e.g. 'SKU-7'.");

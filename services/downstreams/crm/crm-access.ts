import { DownstreamError } from '../downstream-error.js';
import type { CrmViewer, CustomerQuery, CustomerMatch, CrmContact } from './crm-api.js';

/** The CRM's own access rule for reading one contact; throws 403 when the viewer may not. */
export function assertMayRead(viewer: CrmViewer, customerId: string): void {
  if (viewer.roles.includes('support') || viewer.user_id === customerId) return;
  throw new DownstreamError(403, 'forbidden', 'This user may not read that contact.');
}

/** The CRM's own access rule for searching; throws 403 unless the viewer is support staff. */
export function assertMaySearch(viewer: CrmViewer): void {
  if (viewer.roles.includes('support')) return;
  throw new DownstreamError(403, 'forbidden', 'This user may not search customers.');
}

/** Whether `contact` matches `query` (case-insensitive substring; phone numbers compared by digits). */
export function matchesQuery(contact: CrmContact, query: CustomerQuery): boolean {
  const text = query.text.trim().toLowerCase();
  if (text.length === 0) return false;
  const digits = text.replace(/\D/g, '');
  const fields = query.field === undefined ? (['name', 'email', 'phone'] as const) : [query.field];
  return fields.some((field) => {
    if (field === 'phone') return digits.length > 0 && contact.phone.replace(/\D/g, '').includes(digits);
    return contact[field].toLowerCase().includes(text);
  });
}

/** A search hit for `contact`. */
export function toMatch(contact: CrmContact): CustomerMatch {
  return { customer_id: contact.customer_id, name: contact.name, email: contact.email };
}

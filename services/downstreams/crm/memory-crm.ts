import { DownstreamError } from '../downstream-error.js';
import { assertMayRead, assertMaySearch, matchesQuery, toMatch } from './crm-access.js';
import type { CrmApi, CrmContact, CrmViewer, CustomerMatch, CustomerQuery } from './crm-api.js';

/** In-process CRM over a fixed contact list, applying the CRM's own access rules. See {@link CrmApi}. */
export class MemoryCrm implements CrmApi {
  readonly #contacts: CrmContact[];

  constructor(contacts: readonly CrmContact[]) {
    this.#contacts = contacts
      .map((c) => ({ ...c }))
      .sort((a, b) => (a.customer_id < b.customer_id ? -1 : a.customer_id > b.customer_id ? 1 : 0));
  }

  async searchCustomers(tenant: string, query: CustomerQuery, viewer: CrmViewer): Promise<CustomerMatch[]> {
    assertMaySearch(viewer);
    return this.#contacts
      .filter((c) => c.tenant === tenant && matchesQuery(c, query))
      .slice(0, Math.max(0, query.limit))
      .map(toMatch);
  }

  async getContact(tenant: string, customerId: string, viewer: CrmViewer): Promise<CrmContact> {
    assertMayRead(viewer, customerId);
    const contact = this.#contacts.find((c) => c.tenant === tenant && c.customer_id === customerId);
    if (contact === undefined) throw new DownstreamError(404, 'not_found', 'No such contact.');
    return { ...contact };
  }
}

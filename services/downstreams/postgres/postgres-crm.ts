import type pg from 'pg';
import { DownstreamError } from '../downstream-error.js';
import { assertMayRead, assertMaySearch, matchesQuery, toMatch } from '../crm/crm-access.js';
import type { CrmApi, CrmContact, CrmViewer, CustomerMatch, CustomerQuery } from '../crm/crm-api.js';

const COLUMNS = `tenant, customer_id, name, email, phone, shipping_address, preferred_channel,
  date_of_birth, ssn_last4, internal_notes, risk_score`;

/** CRM backed by `store_customers`, applying the CRM's own access rules. See {@link CrmApi}. */
export class PostgresCrm implements CrmApi {
  constructor(private readonly pool: pg.Pool) {}

  async searchCustomers(tenant: string, query: CustomerQuery, viewer: CrmViewer): Promise<CustomerMatch[]> {
    assertMaySearch(viewer);
    const { rows } = await this.pool.query<CrmContact>(
      `SELECT ${COLUMNS} FROM store_customers WHERE tenant = $1 ORDER BY customer_id COLLATE "C"`,
      [tenant],
    );
    return rows
      .filter((c) => matchesQuery(c, query))
      .slice(0, Math.max(0, query.limit))
      .map(toMatch);
  }

  async getContact(tenant: string, customerId: string, viewer: CrmViewer): Promise<CrmContact> {
    assertMayRead(viewer, customerId);
    const { rows } = await this.pool.query<CrmContact>(
      `SELECT ${COLUMNS} FROM store_customers WHERE tenant = $1 AND customer_id = $2`,
      [tenant, customerId],
    );
    if (rows[0] === undefined) throw new DownstreamError(404, 'not_found', 'No such contact.');
    return rows[0];
  }
}

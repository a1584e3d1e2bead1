/** How a customer prefers to be contacted. */
export const CONTACT_CHANNELS = ['email', 'phone', 'sms'] as const;
export type ContactChannel = (typeof CONTACT_CHANNELS)[number];

/**
 * A contact as the CRM's JSON API returns it: everything it holds, including fields that must never
 * reach a model (`date_of_birth`, `ssn_last4`, `internal_notes`, `risk_score`). Consumers keep only
 * what they declare (toolgate's output allow-list).
 */
export interface CrmContact {
  readonly tenant: string;
  readonly customer_id: string;
  readonly name: string;
  readonly email: string;
  readonly phone: string;
  readonly shipping_address: string;
  readonly preferred_channel: ContactChannel;
  readonly date_of_birth: string;
  readonly ssn_last4: string;
  readonly internal_notes: string;
  readonly risk_score: number;
}

/** A search hit: enough to pick the right customer, nothing more. */
export interface CustomerMatch {
  readonly customer_id: string;
  readonly name: string;
  readonly email: string;
}

/**
 * Who the CRM is asked on behalf of: the identity a forwarded user token carries. The CRM
 * applies its own access rules to it, whatever the caller's service account could do.
 */
export interface CrmViewer {
  readonly user_id: string;
  readonly roles: readonly string[];
}

export const CUSTOMER_SEARCH_FIELDS = ['name', 'email', 'phone'] as const;
export type CustomerSearchField = (typeof CUSTOMER_SEARCH_FIELDS)[number];

export interface CustomerQuery {
  /** Case-insensitive substring; digits only are compared for phone numbers. */
  readonly text: string;
  /** Search one field; absent: name, email and phone. */
  readonly field?: CustomerSearchField;
  readonly limit: number;
}

/**
 * The CRM. Access rules (its own): a viewer with role `support` may search and read every contact
 * of the tenant; any other viewer may read only its own contact (`user_id` = `customer_id`) and may
 * not search. A refused viewer gets 403 `forbidden`; an unknown contact 404 `not_found`. Search hits
 * come in customer-id order, at most `limit`.
 */
export interface CrmApi {
  searchCustomers(
    tenant: string,
    query: CustomerQuery,
    viewer: CrmViewer,
    signal?: AbortSignal,
  ): Promise<CustomerMatch[]>;
  getContact(
    tenant: string,
    customerId: string,
    viewer: CrmViewer,
    signal?: AbortSignal,
  ): Promise<CrmContact>;
}

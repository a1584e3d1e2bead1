import { describe, expect, it } from 'vitest';
import { ToolgateError } from '../../../libs/core/errors.js';
import { crmLookupContactTool } from '../../../services/catalog/tools/crm-lookup-contact.js';
import { closeAfterEach } from '../../helpers/close-after-each.js';
import { ana, ben, ctxFor, storeHarness, supportDesk, type StoreHarness } from './store-harness.js';

let h: StoreHarness;
closeAfterEach(() => h);

/** Values of fields the CRM holds that must never reach the model, the results or the audit. */
const ANA_SECRETS = ['4821', '1988-04-12', 'Escalated twice', 'risk_score', 'ssn_last4', 'internal_notes'];

describe('crm_lookup_contact', () => {
  it('returns only the allow-listed fields: PII the CRM sends back never reaches the model or the audit', async () => {
    h = storeHarness();
    const raw = await h.downstreams.crm.getContact('t1', 'C-1', { user_id: 'C-1', roles: [] });
    expect(raw.ssn_last4).toBe('4821');
    const { result, audit } = await h.call('crm_lookup_contact', { customer_id: 'C-1' }, ana);
    expect(result.outcome).toBe('SUCCESS');
    expect(result.payload).toEqual({
      customer_id: 'C-1',
      name: 'Ana Silva',
      email: 'ana.silva@example.com',
      phone: '+1 617 555 0101',
      shipping_address: '12 Elm St, Boston, MA 02110',
      preferred_channel: 'email',
    });
    const seen = JSON.stringify({ result, audit });
    for (const secret of ANA_SECRETS) expect(seen).not.toContain(secret);
  });

  it("a customer's agent cannot read another customer's contact; the CRM is not asked", async () => {
    h = storeHarness();
    const { result } = await h.call('crm_lookup_contact', { customer_id: 'C-2' }, ana);
    expect(result.outcome).toBe('UNAUTHORIZED');
    expect(h.downstreams.faults.crm.received()).toBe(0);
  });

  it('support may read any contact of its tenant', async () => {
    h = storeHarness();
    const { result } = await h.call('crm_lookup_contact', { customer_id: 'C-2' }, supportDesk);
    expect(result.outcome).toBe('SUCCESS');
    expect(result.payload).toMatchObject({ name: 'Ben Okafor', preferred_channel: 'sms' });
  });

  it('the CRM applies its own rules to the forwarded identity, even if toolgate let a call through', async () => {
    h = storeHarness();
    const tool = crmLookupContactTool({ crm: h.downstreams.crm, clock: h.clock });
    const ctx = ctxFor(ben);
    const attempt = tool.execute(
      { customer_id: 'C-1' },
      {
        ctx,
        idempotencyKey: 'k',
        attempt: 1,
        signal: new AbortController().signal,
        assertLive: () => undefined,
      },
    );
    await expect(attempt).rejects.toBeInstanceOf(ToolgateError);
    await expect(attempt).rejects.toMatchObject({ code: 'CALLER_ERROR', retryable: false });
  });

  it('an unknown customer id is a caller error the model can correct', async () => {
    h = storeHarness();
    const { result } = await h.call('crm_lookup_contact', { customer_id: 'C-99' }, supportDesk);
    expect(result.outcome).toBe('EXECUTION_ERROR');
    expect(result.error).toMatchObject({
      code: 'CALLER_ERROR',
      message: 'No customer C-99 exists.',
      retryable: true,
    });
  });
});

describe('search_customers', () => {
  it('finds customers by name, email or phone digits and masks their emails', async () => {
    h = storeHarness();
    const byName = await h.call('search_customers', { query: 'okafor' }, supportDesk);
    expect(byName.result.payload).toEqual({
      matches: [{ customer_id: 'C-2', name: 'Ben Okafor', email_hint: 'b***@example.com' }],
      more_may_exist: false,
    });
    const byPhone = await h.call(
      'search_customers',
      { query: '(617) 555-0101', field: 'phone' },
      supportDesk,
    );
    expect(byPhone.result.payload).toMatchObject({ matches: [{ customer_id: 'C-1' }] });
    const limited = await h.call('search_customers', { query: 'example', limit: 2 }, supportDesk);
    expect(limited.result.payload).toMatchObject({ more_may_exist: true });
    expect((limited.result.payload as { matches: unknown[] }).matches).toHaveLength(2);
  });

  it('stays inside the tenant: t2 customers are never found from t1', async () => {
    h = storeHarness();
    const { result } = await h.call('search_customers', { query: 'Dana' }, supportDesk);
    expect(result.payload).toEqual({ matches: [], more_may_exist: false });
  });

  it('is not offered to or runnable by a customer session; the CRM is not asked', async () => {
    h = storeHarness();
    expect(h.catalog.registry.forPrincipal(ana).map((t) => t.name)).not.toContain('search_customers');
    const { result } = await h.call('search_customers', { query: 'okafor' }, ana);
    expect(result.outcome).toBe('UNAUTHORIZED');
    expect(h.downstreams.faults.crm.received()).toBe(0);
  });
});

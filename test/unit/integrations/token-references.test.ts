import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import type { Principal } from '../../../libs/core/types.js';
import { forwardedUserToken, withDelegatedToken } from '../../../libs/integrations/forwarded-token.js';
import { MemoryTokenReferenceStore } from '../../../libs/integrations/memory-token-references.js';
import {
  isTokenReference,
  type TokenReferenceStore,
} from '../../../libs/integrations/token-reference-store.js';

const agent: Principal = {
  id: 'agent-7',
  tenant: 't1',
  kind: 'agent',
  scopes: ['documents:read'],
  roles: [],
  onBehalfOf: 'alice',
};

describe('MemoryTokenReferenceStore', () => {
  it('hands out unguessable references that resolve to the token until the ttl passes', async () => {
    const clock = new ManualClock(0);
    const store = new MemoryTokenReferenceStore({ clock });
    const ref = await store.put('user-token-abc', { ttlMs: 60_000, tenant: 't1', subject: 'alice' });
    expect(isTokenReference(ref)).toBe(true);
    expect(ref).not.toContain('user-token-abc');
    expect(await store.put('user-token-abc', { ttlMs: 60_000, tenant: 't1', subject: 'alice' })).not.toBe(
      ref,
    );
    expect(await store.resolve(ref)).toEqual({
      token: 'user-token-abc',
      tenant: 't1',
      subject: 'alice',
      expiresAtMs: 60_000,
    });
    expect(await store.resolve(ref)).toBeDefined();
    await clock.advance(60_000);
    expect(await store.resolve(ref)).toBeUndefined();
  });

  it('in one-time mode the first resolve consumes the reference', async () => {
    const store = new MemoryTokenReferenceStore({ clock: new ManualClock(0), mode: 'once' });
    const ref = await store.put('t', { ttlMs: 1_000, tenant: 't1', subject: 'alice' });
    expect(await store.resolve(ref)).toBeDefined();
    expect(await store.resolve(ref)).toBeUndefined();
  });

  it('refuses long-lived or unbound deposits and answers nothing for malformed references', async () => {
    const store = new MemoryTokenReferenceStore({ clock: new ManualClock(0), maxTtlMs: 60_000 });
    await expect(store.put('t', { ttlMs: 60_001, tenant: 't1', subject: 'a' })).rejects.toThrow(RangeError);
    await expect(store.put('t', { ttlMs: 0, tenant: 't1', subject: 'a' })).rejects.toThrow(RangeError);
    await expect(store.put('', { ttlMs: 10, tenant: 't1', subject: 'a' })).rejects.toThrow(RangeError);
    await expect(store.put('t', { ttlMs: 10, tenant: 't1', subject: '' })).rejects.toThrow(RangeError);
    expect(await store.resolve('tref_short')).toBeUndefined();
    expect(await store.resolve(`tref_${'A'.repeat(43)}`)).toBeUndefined();
  });
});

describe('token forwarding helpers', () => {
  it('the agent side deposits and puts only the reference on the principal; the tool side resolves it', async () => {
    const store = new MemoryTokenReferenceStore({ clock: new ManualClock(0) });
    const principal = await withDelegatedToken(store, agent, 'alice-own-token', 60_000);
    expect(principal.delegationRef).toSatisfy(isTokenReference);
    expect(JSON.stringify(principal)).not.toContain('alice-own-token');
    expect(await forwardedUserToken(store, principal)).toBe('alice-own-token');
  });

  it('refuses a missing, unknown or expired reference, and one deposited for someone else', async () => {
    const clock = new ManualClock(0);
    const store = new MemoryTokenReferenceStore({ clock });
    await expect(forwardedUserToken(store, agent)).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      retryable: false,
    });
    await expect(
      forwardedUserToken(store, { ...agent, delegationRef: `tref_${'B'.repeat(43)}` }),
    ).rejects.toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/expired/) });

    const bob = await withDelegatedToken(store, { ...agent, onBehalfOf: 'bob' }, 'bob-token', 1_000);
    // Alice's call carrying Bob's reference (a mix-up or a forged event) does not get Bob's token.
    await expect(
      forwardedUserToken(store, { ...agent, delegationRef: bob.delegationRef! }),
    ).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
    await expect(
      forwardedUserToken(store, {
        ...agent,
        tenant: 't2',
        onBehalfOf: 'bob',
        delegationRef: bob.delegationRef!,
      }),
    ).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await clock.advance(1_000);
    await expect(forwardedUserToken(store, bob)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('an unreachable store is DEPENDENCY_UNAVAILABLE, retryable', async () => {
    const down: TokenReferenceStore = {
      put: () => Promise.reject(new Error('down')),
      resolve: () => Promise.reject(new Error('down')),
    };
    await expect(
      forwardedUserToken(down, { ...agent, delegationRef: `tref_${'C'.repeat(43)}` }),
    ).rejects.toMatchObject({
      code: 'DEPENDENCY_UNAVAILABLE',
      retryable: true,
    });
  });
});

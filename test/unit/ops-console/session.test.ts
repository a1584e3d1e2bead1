import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemorySessionStore } from '../../../libs/adapters/memory/session-store.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { consoleRoles, mayDo } from '../../../services/ops-console/roles.js';
import {
  OperatorSessions,
  type Refreshed,
  type RefreshAtProvider,
  type SignedInIdentity,
} from '../../../services/ops-console/session.js';

const MIN = 60_000;
const ANN: SignedInIdentity = { operator: 'ann', roles: ['operator'], tenants: ['acme'] };

/** Sessions on the memory store and a manual clock: 30 min idle, 8 h lifetime. */
function sessions(refresh?: RefreshAtProvider) {
  const clock = new ManualClock(1_800_000_000_000);
  const store = new MemorySessionStore(clock);
  const failures: string[] = [];
  const s = new OperatorSessions({
    store,
    secret: randomBytes(32),
    clock,
    idleMs: 30 * MIN,
    lifetimeMs: 8 * 60 * MIN,
    refresh,
    onRefreshFailed: (operator) => failures.push(operator),
  });
  return { s, clock, store, failures };
}

const provider = (clock: ManualClock, refreshToken = 'rt-1') => ({
  refreshToken,
  accessExpiresAtMs: clock.now() + 5 * MIN,
  idToken: 'id-token',
});

describe('OperatorSessions', () => {
  it('resumes a started session by its id until it is ended; a copy of the id is then worth nothing', async () => {
    const { s } = sessions();
    const session = await s.start(ANN, 'dev');
    expect(session.sid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await s.resume(session.sid)).toMatchObject({
      operator: 'ann',
      roles: ['operator'],
      tenants: ['acme'],
    });
    await s.end(session.sid);
    expect(await s.resume(session.sid)).toBeUndefined();
  });

  it('refuses forged, malformed and unknown ids', async () => {
    const { s } = sessions();
    const session = await s.start(ANN, 'dev');
    for (const id of [
      undefined,
      '',
      'abc',
      `${session.sid}x`,
      randomBytes(32).toString('base64url'),
      session.sid.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')),
    ])
      expect(await s.resume(id)).toBeUndefined();
  });

  it('ends a session idle for the idle timeout, and restarts the timer on every use', async () => {
    const { s, clock } = sessions();
    const session = await s.start(ANN, 'dev');
    for (let i = 0; i < 4; i++) {
      await clock.advance(29 * MIN);
      expect(await s.resume(session.sid)).toBeDefined();
    }
    await clock.advance(30 * MIN);
    expect(await s.resume(session.sid)).toBeUndefined();
  });

  it('ends a session at its lifetime however busy it is, and earlier at a given limit', async () => {
    const { s, clock } = sessions();
    const session = await s.start(ANN, 'dev');
    const short = await s.start(ANN, 'token', undefined, clock.now() + 10 * MIN);
    for (let t = 0; t < 8 * 60 - 20; t += 20) {
      await clock.advance(20 * MIN);
      expect(await s.resume(session.sid)).toBeDefined();
    }
    expect(await s.resume(short.sid)).toBeUndefined();
    await clock.advance(20 * MIN);
    expect(await s.resume(session.sid)).toBeUndefined();
  });

  it('refreshes at the provider when the access token expired: roles and tenants are then the provider’s', async () => {
    const seen: string[] = [];
    let next: Refreshed | Error = new Error('unset');
    const { s, clock, failures } = sessions(async (token) => {
      seen.push(token);
      if (next instanceof Error) throw next;
      return next;
    });
    const session = await s.start(ANN, 'oidc', provider(clock));
    await clock.advance(4 * MIN);
    expect(await s.resume(session.sid)).toMatchObject({ roles: ['operator'] });
    expect(seen).toEqual([]);
    await clock.advance(1 * MIN);
    next = {
      identity: { operator: 'ann', roles: ['viewer'], tenants: ['*'] },
      tokens: provider(clock, 'rt-2'),
    };
    expect(await s.resume(session.sid)).toMatchObject({ roles: ['viewer'], tenants: ['*'] });
    expect(seen).toEqual(['rt-1']);
    await clock.advance(5 * MIN);
    next = { identity: { operator: 'ann', roles: [], tenants: ['*'] }, tokens: provider(clock, 'rt-3') };
    expect(await s.resume(session.sid)).toBeUndefined();
    expect(seen).toEqual(['rt-1', 'rt-2']);
    expect(failures).toEqual(['ann']);
  });

  it('ends the session when the provider refuses the refresh', async () => {
    const { s, clock, failures } = sessions(() => Promise.reject(new Error('invalid_grant')));
    const session = await s.start(ANN, 'oidc', provider(clock));
    await clock.advance(5 * MIN);
    expect(await s.resume(session.sid)).toBeUndefined();
    expect(failures).toEqual(['ann']);
    expect(await s.resume(session.sid)).toBeUndefined();
  });

  it('never stores the refresh token in the clear, and gives the ID token back at sign-out', async () => {
    const { s, clock, store } = sessions();
    const session = await s.start(ANN, 'oidc', provider(clock, 'very-secret-refresh-token'));
    expect(await store.get(session.sid)).not.toContain('very-secret-refresh-token');
    expect(await s.end(session.sid)).toEqual({ idToken: 'id-token' });
    expect(await s.end(session.sid)).toBeUndefined();
  });

  it('binds the CSRF token to one session: another session, a forged or a missing token fails', async () => {
    const { s } = sessions();
    const a = await s.start(ANN, 'dev');
    const b = await s.start(ANN, 'dev');
    expect(s.checkCsrf(a, s.csrfToken(a))).toBe(true);
    expect(s.checkCsrf(a, s.csrfToken(b))).toBe(false);
    expect(s.checkCsrf(a, randomBytes(32).toString('base64url'))).toBe(false);
    expect(s.checkCsrf(a, undefined)).toBe(false);
    expect(s.checkCsrf(a, '')).toBe(false);
  });

  it('refuses a secret shorter than 32 bytes', () => {
    const clock = new ManualClock();
    expect(
      () =>
        new OperatorSessions({
          store: new MemorySessionStore(clock),
          secret: randomBytes(16),
          clock,
          idleMs: 1,
          lifetimeMs: 1,
        }),
    ).toThrow(RangeError);
  });
});

describe('console roles', () => {
  it('lets viewers only look, operators work cases, approvers decide previews', () => {
    expect(mayDo(['viewer'], 'view')).toBe(true);
    for (const a of ['resolve', 'redrive', 'approve', 'reject'] as const)
      expect(mayDo(['viewer'], a)).toBe(false);
    expect(mayDo(['operator'], 'resolve')).toBe(true);
    expect(mayDo(['operator'], 'redrive')).toBe(true);
    expect(mayDo(['operator'], 'approve')).toBe(false);
    expect(mayDo(['approver'], 'approve')).toBe(true);
    expect(mayDo(['approver'], 'reject')).toBe(true);
    expect(mayDo(['approver'], 'resolve')).toBe(false);
    expect(mayDo([], 'view')).toBe(false);
  });

  it('takes only the console roles from a principal', () => {
    expect(consoleRoles(['support', 'operator', 'admin', 'viewer'])).toEqual(['viewer', 'operator']);
  });
});

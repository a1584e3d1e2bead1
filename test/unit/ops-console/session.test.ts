import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { consoleRoles, mayDo } from '../../../services/ops-console/roles.js';
import { SessionSigner } from '../../../services/ops-console/session.js';

const NOW = 1_800_000_000_000;
const exp = NOW / 1000 + 600;

describe('SessionSigner', () => {
  const signer = new SessionSigner(randomBytes(32));

  it('opens what it sealed, until it expires', () => {
    const s = signer.create('ann', ['operator'], ['t1'], 'token', exp);
    const cookie = signer.seal(s);
    expect(signer.open(cookie, NOW)).toEqual(s);
    expect(signer.open(cookie, exp * 1000)).toBeUndefined();
  });

  it('refuses a cookie whose body was changed, one sealed with another key, and garbage', () => {
    const cookie = signer.seal(signer.create('vic', ['viewer'], ['t1'], 'token', exp));
    const [body, mac] = cookie.split('.') as [string, string];
    const promoted = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), roles: ['operator'] }),
    ).toString('base64url');
    expect(signer.open(`${promoted}.${mac}`, NOW)).toBeUndefined();
    const other = new SessionSigner(randomBytes(32));
    expect(
      signer.open(other.seal(other.create('vic', ['operator'], ['t1'], 'token', exp)), NOW),
    ).toBeUndefined();
    for (const junk of ['', '.', 'abc', `${body}.`, `.${mac}`])
      expect(signer.open(junk, NOW)).toBeUndefined();
  });

  it('binds the CSRF token to one session: another session, a forged or a missing token fails', () => {
    const a = signer.create('ann', ['operator'], ['t1'], 'token', exp);
    const b = signer.create('ann', ['operator'], ['t1'], 'token', exp);
    expect(signer.checkCsrf(a, signer.csrfToken(a))).toBe(true);
    expect(signer.checkCsrf(a, signer.csrfToken(b))).toBe(false);
    expect(signer.checkCsrf(a, randomBytes(32).toString('base64url'))).toBe(false);
    expect(signer.checkCsrf(a, undefined)).toBe(false);
    expect(signer.checkCsrf(a, '')).toBe(false);
  });

  it('refuses a key shorter than 32 bytes', () => {
    expect(() => new SessionSigner(randomBytes(16))).toThrow(RangeError);
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

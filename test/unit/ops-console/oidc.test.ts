import { describe, expect, it } from 'vitest';
import { isReturnPath, parsePendingSignIn, returnPathOr } from '../../../services/ops-console/oidc.js';

describe('the return target after sign-in', () => {
  it('is a path on the console, with its query', () => {
    for (const path of [
      '/cases',
      '/cases/c-1',
      '/cases?state=open&tool=issue_refund',
      '/audit?principal=a%2Fb',
    ])
      expect(returnPathOr(path)).toBe(path);
  });

  it('is never another site: scheme, protocol-relative, backslash and control-character tricks give /cases', () => {
    for (const path of [
      'https://evil.test/',
      '//evil.test/x',
      '/\\evil.test',
      '\\\\evil.test',
      'javascript:alert(1)',
      '/cases\n/x',
      '/\t/evil.test',
      'cases',
      '',
      `/${'a'.repeat(2000)}`,
      null,
      undefined,
    ]) {
      expect(returnPathOr(path)).toBe('/cases');
    }
    expect(isReturnPath('/ok')).toBe(true);
  });

  it('reads back only a well-formed pending sign-in with a safe return path', () => {
    const pending = { state: 's', nonce: 'n', codeVerifier: 'v'.repeat(43), returnTo: '/cases/c-1' };
    expect(parsePendingSignIn(JSON.stringify(pending))).toEqual(pending);
    expect(parsePendingSignIn(JSON.stringify({ ...pending, returnTo: '//evil.test' }))).toBeUndefined();
    expect(parsePendingSignIn(JSON.stringify({ ...pending, extra: 1 }))).toBeUndefined();
    expect(parsePendingSignIn('not json')).toBeUndefined();
    expect(parsePendingSignIn(undefined)).toBeUndefined();
  });
});

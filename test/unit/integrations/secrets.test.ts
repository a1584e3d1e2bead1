import { chmodSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import {
  EnvFileSecretsSource,
  envVariableName,
  parseEnvFile,
} from '../../../libs/integrations/env-file-secrets.js';
import { MemorySecretsSource } from '../../../libs/integrations/memory-secrets.js';
import { Secret } from '../../../libs/integrations/secret.js';

const dir = mkdtempSync(join(tmpdir(), 'tg-secrets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Secret', () => {
  it('hides its value from every way a value gets printed, and reveals it only when asked', () => {
    const secret = new Secret('hunter2-value');
    const shown = [
      String(secret),
      // eslint-disable-next-line @typescript-eslint/restrict-template-expressions -- interpolation is what is tested
      `${secret}`,
      JSON.stringify({ secret }),
      inspect({ nested: { secret } }),
      inspect(secret),
    ];
    for (const text of shown) expect(text).not.toContain('hunter2-value');
    expect(secret.reveal()).toBe('hunter2-value');
  });
});

describe('MemorySecretsSource', () => {
  it('answers set values as Secrets, undefined for others, and sees rotations', async () => {
    const source = new MemorySecretsSource({ 'oauth/t1/api/client_secret': 'v1' });
    expect((await source.get('oauth/t1/api/client_secret'))?.reveal()).toBe('v1');
    expect(await source.get('oauth/t2/api/client_secret')).toBeUndefined();
    source.set('oauth/t1/api/client_secret', 'v2');
    expect((await source.get('oauth/t1/api/client_secret'))?.reveal()).toBe('v2');
    source.delete('oauth/t1/api/client_secret');
    expect(await source.get('oauth/t1/api/client_secret')).toBeUndefined();
  });
});

describe('EnvFileSecretsSource', () => {
  it('maps secret names to variable names', () => {
    expect(envVariableName('oauth/t1/documents-api/client_secret')).toBe(
      'OAUTH_T1_DOCUMENTS_API_CLIENT_SECRET',
    );
  });

  it('parses dotenv lines: comments, export, quotes, escapes; skips junk without echoing it', () => {
    const parsed = parseEnvFile(
      [
        '# credentials',
        'A=plain # trailing comment',
        'export B="two words\\nline"',
        "C='lit#eral $x'",
        'not a line at all',
        '  D = spaced  ',
        'A=later wins',
      ].join('\n'),
    );
    expect(Object.fromEntries(parsed)).toEqual({
      A: 'later wins',
      B: 'two words\nline',
      C: 'lit#eral $x',
      D: 'spaced',
    });
  });

  it('reads a private file, re-reads it when it changes, and refuses one others can read', async () => {
    const file = join(dir, 'secrets.env');
    writeFileSync(file, 'OAUTH_T1_API_CLIENT_SECRET=first\n', { mode: 0o600 });
    const source = new EnvFileSecretsSource(file);
    expect((await source.get('oauth/t1/api/client_secret'))?.reveal()).toBe('first');
    expect(await source.get('oauth/t1/api/client_id')).toBeUndefined();

    writeFileSync(file, 'OAUTH_T1_API_CLIENT_SECRET=rotated-value\n', { mode: 0o600 });
    utimesSync(file, new Date(), new Date(Date.now() + 5_000));
    expect((await source.get('oauth/t1/api/client_secret'))?.reveal()).toBe('rotated-value');

    chmodSync(file, 0o644);
    const err = await source.get('oauth/t1/api/client_secret').catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/readable by group or others/);
    expect((err as Error).message).not.toContain('rotated-value');
    expect(
      (
        await new EnvFileSecretsSource(file, { allowSharedFile: true }).get('oauth/t1/api/client_secret')
      )?.reveal(),
    ).toBe('rotated-value');
    await expect(new EnvFileSecretsSource(join(dir, 'missing.env')).get('x')).rejects.toThrow(/cannot read/);
  });
});

import { createPrivateKey, createPublicKey } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PRINCIPAL_AUDIENCE, DEFAULT_PRINCIPAL_ISSUER } from '../../../libs/auth/index.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import {
  JWKS_FILE,
  PRIVATE_KEY_FILE,
  type GeneratedKeys,
} from '../../../services/cli/commands/keys-generate.js';
import { cli } from './capture.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function workDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tg-keys-'));
  dirs.push(dir);
  return dir;
}

const modeOf = (path: string): number => statSync(path).mode & 0o777;

describe('keys generate', () => {
  it('writes a 0600 PKCS#8 Ed25519 private key and its public JWKS, and says how to use them', async () => {
    const cwd = workDir();
    const r = await cli(['keys', 'generate', '--out', 'keys', '--kid', 'ab-1'], { cwd });
    expect(r.code).toBe(EXIT.ok);
    const pem = readFileSync(join(cwd, 'keys', PRIVATE_KEY_FILE), 'utf8');
    expect(pem.startsWith('-----BEGIN PRIVATE KEY-----')).toBe(true);
    expect(modeOf(join(cwd, 'keys', PRIVATE_KEY_FILE))).toBe(0o600);
    const privateKey = createPrivateKey(pem);
    expect(privateKey.asymmetricKeyType).toBe('ed25519');

    const jwks = JSON.parse(readFileSync(join(cwd, 'keys', JWKS_FILE), 'utf8')) as {
      keys: Array<Record<string, string>>;
    };
    expect(jwks.keys).toHaveLength(1);
    const jwk = jwks.keys[0]!;
    expect(jwk).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x: expect.any(String),
      kid: 'ab-1',
      alg: 'EdDSA',
      use: 'sig',
    });
    expect('d' in jwk).toBe(false);
    // The JWKS is the public half of exactly that private key.
    expect(createPublicKey(privateKey).export({ format: 'jwk' }).x).toBe(jwk.x);

    expect(r.stdout).toContain(`wrote ${join(cwd, 'keys', PRIVATE_KEY_FILE)}`);
    expect(r.stdout).toContain(`PRINCIPAL_JWKS_FILE=${join(cwd, 'keys', JWKS_FILE)}`);
    expect(r.stdout).toContain(`PRINCIPAL_ISSUER=${DEFAULT_PRINCIPAL_ISSUER}`);
    expect(r.stdout).toContain(`PRINCIPAL_AUDIENCE=${DEFAULT_PRINCIPAL_AUDIENCE}`);
    expect(r.stdout).toContain(`createPrivateKey(readFileSync("${join(cwd, 'keys', PRIVATE_KEY_FILE)}"))`);
    expect(r.stdout).not.toContain(pem.split('\n')[1]!);
  });

  it('--json prints one document with the paths, kid and environment; a default kid is made', async () => {
    const cwd = workDir();
    const r = await cli(['keys', 'generate', '--out', cwd, '--json']);
    expect(r.code).toBe(EXIT.ok);
    const doc = r.json<GeneratedKeys>();
    expect(doc.kid).toMatch(/^agent-backend-\d{8}-[0-9a-f]{6}$/);
    expect(doc).toMatchObject({
      alg: 'EdDSA',
      privateKeyFile: join(cwd, PRIVATE_KEY_FILE),
      jwksFile: join(cwd, JWKS_FILE),
      executorEnv: {
        PRINCIPAL_JWKS_FILE: join(cwd, JWKS_FILE),
        PRINCIPAL_ISSUER: DEFAULT_PRINCIPAL_ISSUER,
        PRINCIPAL_AUDIENCE: DEFAULT_PRINCIPAL_AUDIENCE,
      },
    });
    const jwks = JSON.parse(readFileSync(doc.jwksFile, 'utf8')) as { keys: Array<{ kid: string }> };
    expect(jwks.keys[0]!.kid).toBe(doc.kid);
  });

  it('refuses to overwrite either file without --force, and leaves both untouched', async () => {
    const cwd = workDir();
    writeFileSync(join(cwd, JWKS_FILE), 'keep me');
    const r = await cli(['keys', 'generate', '--out', cwd]);
    expect(r.code).toBe(EXIT.failure);
    expect(r.stderr).toContain(`refusing to overwrite ${join(cwd, JWKS_FILE)}`);
    expect(r.stderr).toContain('--force');
    expect(readFileSync(join(cwd, JWKS_FILE), 'utf8')).toBe('keep me');
    expect(existsSync(join(cwd, PRIVATE_KEY_FILE))).toBe(false);
    expect(r.stdout).toBe('');

    const first = await cli(['keys', 'generate', '--out', cwd, '--force', '--kid', 'k-a']);
    expect(first.code).toBe(EXIT.ok);
    const pem = readFileSync(join(cwd, PRIVATE_KEY_FILE), 'utf8');
    const again = await cli(['keys', 'generate', '--out', cwd, '--json']);
    expect(again.code).toBe(EXIT.failure);
    expect(JSON.parse(again.stderr)).toMatchObject({ error: { kind: 'failure', exitCode: 1 } });
    expect(readFileSync(join(cwd, PRIVATE_KEY_FILE), 'utf8')).toBe(pem);

    const forced = await cli(['keys', 'generate', '--out', cwd, '--force', '--kid', 'k-b']);
    expect(forced.code).toBe(EXIT.ok);
    expect(readFileSync(join(cwd, PRIVATE_KEY_FILE), 'utf8')).not.toBe(pem);
    expect(modeOf(join(cwd, PRIVATE_KEY_FILE))).toBe(0o600);
    expect(readFileSync(join(cwd, JWKS_FILE), 'utf8')).toContain('"kid": "k-b"');
  });

  it('refuses a bad --kid or a missing --out as usage errors, writing nothing', async () => {
    const cwd = workDir();
    const bad = await cli(['keys', 'generate', '--out', 'k', '--kid', 'has space'], { cwd });
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.stderr).toContain('--kid');
    expect(existsSync(join(cwd, 'k'))).toBe(false);
    const missing = await cli(['keys', 'generate'], { cwd });
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toContain('--out');
  });

  it('is listed in the help with its options', async () => {
    const top = await cli(['--help']);
    expect(top.stdout).toContain('  keys generate  ');
    const own = await cli(['keys', 'generate', '--help']);
    expect(own.code).toBe(EXIT.ok);
    for (const text of ['--out <dir>', '--kid <id>', '--force', PRIVATE_KEY_FILE, JWKS_FILE, '0600'])
      expect(own.stdout).toContain(text);
  });
});

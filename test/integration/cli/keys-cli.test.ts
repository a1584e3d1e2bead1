import { spawnSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPrincipalVerifier } from '../../../libs/auth/principal-verifier.js';
import { refusalReasonOf } from '../../../libs/auth/principal-refusal.js';
import { signPrincipal } from '../../../libs/auth/sign-principal.js';
import type { Principal } from '../../../libs/core/types.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import type { GeneratedKeys } from '../../../services/cli/commands/keys-generate.js';
import { loadExecutorConfig } from '../../../services/executor/config.js';
import { resolveSigning } from '../../../services/sdk/client-options.js';

const root = join(import.meta.dirname, '../../..');
const work = mkdtempSync(join(tmpdir(), 'tg-keys-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const principal: Principal = {
  id: 'agent-9',
  tenant: 't1',
  kind: 'agent',
  scopes: ['orders:read'],
  roles: ['support'],
};

/** `toolgate keys generate --out <dir> --json` as a shell runs it; its JSON report. */
function generate(dir: string): GeneratedKeys {
  const proc = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'services/cli/main.ts', 'keys', 'generate', '--out', dir, '--json'],
    { cwd: root, encoding: 'utf8', env: process.env },
  );
  expect(proc.stderr).toBe('');
  expect(proc.status).toBe(EXIT.ok);
  return JSON.parse(proc.stdout) as GeneratedKeys;
}

/** The executor's verifier for an environment pointing PRINCIPAL_JWKS_FILE at `jwksFile`, as service.ts builds it. */
function executorVerifier(env: Readonly<Record<string, string>>) {
  const config = loadExecutorConfig({
    KAFKA_BROKERS: '127.0.0.1:19092',
    SCHEMA_REGISTRY_URL: 'http://127.0.0.1:18081/apis/ccompat/v7',
    REDIS_URL: 'redis://127.0.0.1:6379',
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
    ...env,
  });
  return createPrincipalVerifier({
    keys: config.principal.jwks,
    issuer: config.principal.issuer,
    audience: config.principal.audience,
  });
}

/** An assertion signed as the SDK signs a turn: its signing options with defaults, the PEM key loaded as printed. */
function sdkSign(keys: GeneratedKeys): Promise<string> {
  const signing = resolveSigning({
    key: createPrivateKey(readFileSync(keys.privateKeyFile)),
    kid: keys.kid,
  });
  return signPrincipal(principal, signing.key, {
    issuer: signing.issuer,
    audience: signing.audience,
    ttlSeconds: signing.ttlSeconds ?? 300,
    ...(signing.kid === undefined ? {} : { kid: signing.kid }),
  });
}

describe('toolgate keys generate (the installed entry point)', () => {
  it('makes a pair the SDK signs with and the executor, configured only by the printed env, accepts', async () => {
    const keys = generate(join(work, 'a'));
    const verifier = executorVerifier(keys.executorEnv);
    await expect(verifier.verify(await sdkSign(keys))).resolves.toEqual(principal);

    // PRINCIPAL_JWKS_FILE alone is enough: issuer and audience are the defaults on both sides.
    const minimal = executorVerifier({ PRINCIPAL_JWKS_FILE: keys.jwksFile });
    await expect(minimal.verify(await sdkSign(keys))).resolves.toEqual(principal);
  });

  it("refuses a second pair's assertions: unknown kid, and a bad signature when it borrows the kid", async () => {
    const first = generate(join(work, 'b1'));
    const second = generate(join(work, 'b2'));
    expect(second.kid).not.toBe(first.kid);
    const verifier = executorVerifier({ PRINCIPAL_JWKS_FILE: first.jwksFile });

    const foreign = await sdkSign(second);
    const refusal = await verifier.verify(foreign).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refusalReasonOf(refusal)).toBe('unknown_key');

    const borrowed = await sdkSign({ ...second, kid: first.kid });
    const forged = await verifier.verify(borrowed).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refusalReasonOf(forged)).toBe('signature');
    // The first pair still works with the same verifier: only the stranger was refused.
    await expect(verifier.verify(await sdkSign(first))).resolves.toEqual(principal);
  });
});

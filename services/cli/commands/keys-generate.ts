import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  DEFAULT_PRINCIPAL_AUDIENCE,
  DEFAULT_PRINCIPAL_ISSUER,
} from '../../../libs/auth/principal-defaults.js';
import {
  generatePrincipalKeys,
  isPrincipalKeyId,
  PRINCIPAL_KEY_ALGORITHM,
} from '../../../libs/auth/principal-keys.js';
import { EXIT, FailureError, UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command.js';

/** The agent backend's private signing key (PEM PKCS#8), as `keys generate` names it in `--out`. */
export const PRIVATE_KEY_FILE = 'principal-signing-key.pem';
/** The executors' public JWKS, as `keys generate` names it in `--out`. */
export const JWKS_FILE = 'principal-jwks.json';

/** What `keys generate --json` prints. */
export interface GeneratedKeys {
  readonly kid: string;
  readonly alg: typeof PRINCIPAL_KEY_ALGORITHM;
  /** Absolute path of the private key (mode 0600). */
  readonly privateKeyFile: string;
  /** Absolute path of the public JWKS (mode 0644). */
  readonly jwksFile: string;
  /** The executors' environment for these keys. */
  readonly executorEnv: Readonly<Record<string, string>>;
  /** How the agent backend hands the key to the SDK. */
  readonly sdkSigning: string;
}

/** `keys generate`: a principal-signing key pair as the two files the two sides need. */
export const keysGenerateCommand: CommandSpec = {
  path: ['keys', 'generate'],
  summary: "Make the agent backend's principal-signing key and the executors' JWKS.",
  details: [
    `Writes two files into --out (created if missing): ${PRIVATE_KEY_FILE}, the agent backend's Ed25519 private key (PEM PKCS#8, mode 0600; a secret, for the SDK's signing.key only), and ${JWKS_FILE}, its public half as a JWKS with kid, alg ${PRINCIPAL_KEY_ALGORITHM} and use sig (not a secret; the executors' PRINCIPAL_JWKS_FILE). Existing files are never replaced unless --force is given. Prints the executors' environment and the SDK line that loads the key.`,
    `Issuer and audience are not part of the keys: the SDK signs as ${DEFAULT_PRINCIPAL_ISSUER} for ${DEFAULT_PRINCIPAL_AUDIENCE} by default, and the executors expect exactly that by default (PRINCIPAL_ISSUER, PRINCIPAL_AUDIENCE).`,
    'To rotate, generate a new pair into another directory, add its key to the executors\u2019 JWKS next to the old one, switch the agent backends to the new private key, then remove the old key from the JWKS once the old assertions have expired.',
  ],
  positionals: [],
  options: {
    out: {
      type: 'string',
      required: true,
      valueName: 'dir',
      description: 'Directory to write the two files into (relative to the working directory).',
    },
    kid: {
      type: 'string',
      valueName: 'id',
      description: 'Key id for the JWS header and the JWK (1-128 of A-Z a-z 0-9 . _ -).',
      defaultText: 'agent-backend-<date>-<random>',
    },
    force: {
      type: 'boolean',
      description: 'Replace existing files (assertions signed with the old key stop verifying).',
    },
  },
  needs: [],
  examples: [
    'toolgate keys generate --out deploy/docker/keys',
    'toolgate keys generate --out ./keys --kid agent-backend-2026-01 --json',
  ],
  async run({ args, out, io }) {
    const dir = resolve(io.cwd ?? process.cwd(), args.string('out')!);
    const kid = args.string('kid') ?? defaultKid(new Date(io.clock?.now() ?? Date.now()));
    if (!isPrincipalKeyId(kid)) {
      throw new UsageError(`--kid must be 1-128 of A-Z a-z 0-9 . _ - (got '${kid}').`, args.command);
    }
    const force = args.flag('force');
    const privateKeyFile = join(dir, PRIVATE_KEY_FILE);
    const jwksFile = join(dir, JWKS_FILE);
    if (!force) refuseExisting([privateKeyFile, jwksFile]);

    const keys = generatePrincipalKeys(kid);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw fileError('cannot create the directory', dir, err);
    }
    writeNew(privateKeyFile, keys.privateKeyPem, 0o600, force);
    writeNew(jwksFile, `${JSON.stringify(keys.jwks, null, 2)}\n`, 0o644, force);

    const report: GeneratedKeys = {
      kid,
      alg: PRINCIPAL_KEY_ALGORITHM,
      privateKeyFile,
      jwksFile,
      executorEnv: {
        PRINCIPAL_JWKS_FILE: jwksFile,
        PRINCIPAL_ISSUER: DEFAULT_PRINCIPAL_ISSUER,
        PRINCIPAL_AUDIENCE: DEFAULT_PRINCIPAL_AUDIENCE,
      },
      sdkSigning: `signing: { key: createPrivateKey(readFileSync(${JSON.stringify(privateKeyFile)})), kid: ${JSON.stringify(kid)} }`,
    };
    out.json(report);
    out.text(textReport(report));
    return EXIT.ok;
  },
};

/** A key id that sorts by creation day and does not collide with another made the same day. */
function defaultKid(now: Date): string {
  const day = now.toISOString().slice(0, 10).replace(/-/g, '');
  return `agent-backend-${day}-${randomBytes(3).toString('hex')}`;
}

function refuseExisting(paths: readonly string[]): void {
  const existing = paths.filter((p) => existsSync(p));
  if (existing.length === 0) return;
  throw new FailureError(
    `refusing to overwrite ${existing.join(' and ')}.`,
    'Pass --force to replace them (executors trusting the old key then refuse the new key until their JWKS is updated), or choose another --out.',
  );
}

/**
 * Writes `text` to `path` with `mode`, never leaving a half-written file: it goes to a temporary
 * file in the same directory first, then is linked into place (which fails if `path` appeared
 * meanwhile) or, with `force`, renamed over it.
 */
function writeNew(path: string, text: string, mode: number, force: boolean): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, text, { mode, flag: 'wx' });
    chmodSync(tmp, mode); // the process umask may have narrowed or (0000) kept it
    if (force) renameSync(tmp, path);
    else linkSync(tmp, path);
  } catch (err) {
    throw (err as NodeJS.ErrnoException).code === 'EEXIST'
      ? new FailureError(`refusing to overwrite ${path}.`, 'Pass --force to replace it.')
      : fileError('cannot write', path, err);
  } finally {
    if (existsSync(tmp)) unlinkSync(tmp);
  }
}

function fileError(what: string, path: string, err: unknown): FailureError {
  const code = (err as NodeJS.ErrnoException).code ?? 'error';
  return new FailureError(`${what} ${path} (${code}).`, 'Check the path and its permissions.', {
    cause: err,
  });
}

function textReport(r: GeneratedKeys): string {
  const env = Object.entries(r.executorEnv).map(([k, v]) => `  ${k}=${v}`);
  return [
    `wrote ${r.privateKeyFile}  (private, mode 0600: the agent backend's signing key; keep it secret)`,
    `wrote ${r.jwksFile}  (public: the executors' trusted keys; kid ${r.kid}, alg ${r.alg})`,
    '',
    'Executors (PRINCIPAL_ISSUER and PRINCIPAL_AUDIENCE are the defaults; shown for clarity):',
    ...env,
    '',
    "Agent backend (SDK), with createPrivateKey from 'node:crypto' and readFileSync from 'node:fs':",
    `  ${r.sdkSigning}`,
    '',
  ].join('\n');
}

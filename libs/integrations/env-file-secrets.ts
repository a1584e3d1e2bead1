import { readFile, stat } from 'node:fs/promises';
import { Secret } from './secret.js';
import type { SecretsSource } from './secrets-source.js';

/** Options of {@link EnvFileSecretsSource}. */
export interface EnvFileSecretsOptions {
  /**
   * Accept a file that its group or other users may read. Default false: such a file is refused,
   * because a credential file anyone on the host can read is already leaked.
   */
  readonly allowSharedFile?: boolean;
}

/**
 * A {@link SecretsSource} over a dotenv-style file (`NAME=value` lines, `#` comments, optional
 * `export ` prefix, single- or double-quoted values), as mounted by a secrets manager or an
 * orchestrator's secret volume.
 *
 * - A secret name maps to a variable name by upper-casing it and turning every run of characters
 *   outside `[A-Z0-9]` into `_`: `oauth/t1/documents-api/client_secret` is
 *   `OAUTH_T1_DOCUMENTS_API_CLIENT_SECRET` (so two names that differ only in punctuation share a
 *   variable; pick names that do not).
 * - The file is re-read when its modification time or size changes, so a rotated value is seen on
 *   the next `get` without a restart. A file that cannot be read, or is readable by group or others
 *   (unless allowed), makes `get` throw; the error names the file and never a value.
 */
export class EnvFileSecretsSource implements SecretsSource {
  readonly #path: string;
  readonly #allowShared: boolean;
  #loaded: { readonly stamp: string; readonly values: ReadonlyMap<string, string> } | undefined;

  constructor(path: string, options: EnvFileSecretsOptions = {}) {
    this.#path = path;
    this.#allowShared = options.allowSharedFile ?? false;
  }

  async get(name: string): Promise<Secret | undefined> {
    const values = await this.#values();
    const value = values.get(envVariableName(name));
    return value === undefined ? undefined : new Secret(value);
  }

  async #values(): Promise<ReadonlyMap<string, string>> {
    let info;
    try {
      info = await stat(this.#path);
    } catch (err) {
      throw new Error(`cannot read the secrets file ${this.#path}`, { cause: err });
    }
    if (!this.#allowShared && (info.mode & 0o077) !== 0) {
      throw new Error(
        `the secrets file ${this.#path} is readable by group or others (mode ${(info.mode & 0o777).toString(8)}); chmod 600 it`,
      );
    }
    const stamp = `${info.mtimeMs}:${info.size}:${info.ino}`;
    if (this.#loaded?.stamp === stamp) return this.#loaded.values;
    let text: string;
    try {
      text = await readFile(this.#path, 'utf8');
    } catch (err) {
      throw new Error(`cannot read the secrets file ${this.#path}`, { cause: err });
    }
    const values = parseEnvFile(text);
    this.#loaded = { stamp, values };
    return values;
  }
}

/** The variable a secret name is stored under in an env file (see {@link EnvFileSecretsSource}). */
export function envVariableName(name: string): string {
  return name
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

const LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/;

/**
 * Parses dotenv text. Lines that are blank, comments, or not `NAME=value` are skipped (their text is
 * never echoed: it may be a value). Later assignments win. Double-quoted values understand `\n`,
 * `\"` and `\\`; single-quoted ones are literal; unquoted ones end at ` #`.
 */
export function parseEnvFile(text: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    if (/^\s*(#|$)/.test(raw)) continue;
    const match = LINE.exec(raw);
    if (match === null) continue;
    values.set(match[1]!, unquote(match[2]!));
  }
  return values;
}

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    return value.slice(1, -1).replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1);
  const comment = value.search(/\s#/);
  return comment === -1 ? value : value.slice(0, comment).trimEnd();
}

import { constants } from 'node:fs';
import { open, readlink, realpath, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';
import { ToolgateError } from '../core/errors.js';
import { relativePathSegments, type PathRefusal, type PathRules } from './path-rules.js';

/** Options of {@link ConfinedFs.create}. */
export interface ConfinedFsOptions extends PathRules {
  /** Largest number of bytes one read returns; longer files are truncated (and say so). */
  readonly maxBytes: number;
  /** Lower-case extensions, dot included, that may be read (e.g. `['.md', '.txt']`). Default: any. */
  readonly extensions?: readonly string[];
}

/** One read of a text document. */
export interface ConfinedRead {
  /** The path relative to the root, `/`-separated, as resolved (a link inside the root is followed). */
  readonly path: string;
  /** The file's full size; `content` holds at most `maxBytes` of it. */
  readonly sizeBytes: number;
  readonly content: string;
  readonly truncated: boolean;
}

const FIX = "Give a path relative to the documents folder, e.g. 'handbook/leave-policy.md'.";

const WHY: Readonly<Record<PathRefusal | 'outside' | 'extension' | 'not-file', string>> = {
  empty: 'the path is empty',
  'too-long': 'the path is too long',
  'control-character': 'the path contains control characters',
  absolute: 'absolute paths are not accepted',
  backslash: 'backslashes are not accepted; use "/"',
  colon: 'the path contains ":"',
  'encoded-separator': 'percent-encoded separators are not accepted',
  'unicode-lookalike': 'the path contains look-alike or invisible characters',
  traversal: '"." and ".." are not accepted',
  'empty-segment': 'the path has an empty part ("//" or a trailing "/")',
  hidden: 'hidden files are not readable',
  'trailing-dot-or-space': 'a part of the path ends with a dot or a space',
  'device-name': 'the path names a device',
  'short-name': 'short (8.3) names are not accepted',
  'too-deep': 'the path is nested too deeply',
  outside: 'the path leads outside the documents folder',
  extension: 'this kind of file is not readable with this tool',
  'not-file': 'the path is not a regular file',
};

/**
 * Read-only access to one allow-listed directory: nothing outside it can be read,
 * whatever path the model sends.
 *
 * {@link ConfinedFs.readText} checks, in order: the lexical rules of `relativePathSegments` (no
 * `..`, absolute paths, NUL, backslashes, Windows tricks); the extension allow-list; then
 * `realpath` of the joined path must lie inside the root's own realpath (so a symlink pointing out —
 * at any depth — is refused, and one pointing elsewhere inside is followed), and the resolved path
 * must pass the same lexical rules (a link cannot reach a hidden file). The file is opened read-only
 * with O_NOFOLLOW and O_NONBLOCK (a FIFO cannot hang the read), and the opened descriptor is checked
 * again — via /proc/self/fd on Linux, else by device and inode — to be a regular file inside the
 * root, which closes the gap between the check and the open if a path component is swapped for a
 * link meanwhile.
 *
 * Errors are CALLER_ERROR with a fix the model can use; they never include the file's content or
 * say what lies outside the root. Content is decoded as UTF-8; binary files are refused. What is
 * read is untrusted input to the next model turn, like any retrieved document.
 */
export class ConfinedFs {
  readonly #root: string;
  readonly #options: ConfinedFsOptions;

  private constructor(root: string, options: ConfinedFsOptions) {
    this.#root = root;
    this.#options = options;
  }

  /** Opens `root` (which must be an existing directory) for confined reads. */
  static async create(root: string, options: ConfinedFsOptions): Promise<ConfinedFs> {
    if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes <= 0) {
      throw new RangeError('maxBytes must be a positive integer');
    }
    const real = await realpath(root);
    if (!(await stat(real)).isDirectory()) throw new Error(`${root} is not a directory`);
    return new ConfinedFs(real, options);
  }

  /** The root's real path. */
  get root(): string {
    return this.#root;
  }

  async readText(path: string): Promise<ConfinedRead> {
    const lexical = relativePathSegments(path, this.#options);
    if (!lexical.ok) throw refused(lexical.why);
    this.#checkExtension(lexical.segments);

    let real: string;
    try {
      real = await realpath(join(this.#root, ...lexical.segments));
    } catch (err) {
      throw fsError(err);
    }
    const inside = this.#relativeInside(real);
    if (inside === undefined) throw refused('outside');
    const again = relativePathSegments(inside.join('/'), this.#options);
    if (!again.ok) throw refused(again.why);
    this.#checkExtension(inside);

    let handle: FileHandle;
    try {
      handle = await open(
        real,
        constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0),
      );
    } catch (err) {
      throw fsError(err);
    }
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw refused('not-file');
      if (!(await this.#opened(handle, real, info))) throw refused('outside');
      const limit = Math.min(info.size, this.#options.maxBytes);
      const buffer = Buffer.alloc(limit);
      let filled = 0;
      while (filled < limit) {
        const { bytesRead } = await handle.read(buffer, filled, limit - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      const truncated = info.size > filled;
      return {
        path: inside.join('/'),
        sizeBytes: info.size,
        content: decodeText(buffer.subarray(0, filled), truncated),
        truncated,
      };
    } finally {
      await handle.close();
    }
  }

  #checkExtension(segments: readonly string[]): void {
    const allowed = this.#options.extensions;
    if (allowed === undefined) return;
    const ext = extname(segments[segments.length - 1] ?? '').toLowerCase();
    if (!allowed.includes(ext)) throw refused('extension');
  }

  /** `real`'s segments relative to the root, or undefined when it is not strictly inside it. */
  #relativeInside(real: string): string[] | undefined {
    if (real !== this.#root && !real.startsWith(this.#root.endsWith(sep) ? this.#root : this.#root + sep)) {
      return undefined;
    }
    const rel = relative(this.#root, real);
    if (rel === '' || rel.startsWith('..')) return undefined;
    return rel.split(sep);
  }

  /** Whether the open descriptor is the file that was checked, still inside the root. */
  async #opened(handle: FileHandle, real: string, info: { dev: number; ino: number }): Promise<boolean> {
    try {
      const actual = await readlink(`/proc/self/fd/${handle.fd}`);
      return actual === real && this.#relativeInside(actual) !== undefined;
    } catch {
      // No /proc (macOS, some sandboxes): the path must still name the very inode we opened.
      try {
        const now = await stat(real);
        return now.dev === info.dev && now.ino === info.ino;
      } catch {
        return false;
      }
    }
  }
}

function decodeText(bytes: Buffer, truncated: boolean): string {
  let end = bytes.length;
  if (truncated) {
    // Do not cut a multi-byte character in half: back up to the start of the last one if incomplete.
    let i = end - 1;
    let continuation = 0;
    while (i >= 0 && continuation < 3 && (bytes[i]! & 0xc0) === 0x80) {
      i -= 1;
      continuation += 1;
    }
    if (i >= 0) {
      const lead = bytes[i]!;
      const needed = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
      if (needed > continuation + 1) end = i;
    }
  }
  const slice = bytes.subarray(0, end);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(slice);
  } catch {
    throw notText();
  }
  if (text.includes('\u0000')) throw notText();
  return text;
}

function notText(): ToolgateError {
  return new ToolgateError('CALLER_ERROR', 'That file is not a text document, so it cannot be read here.', {
    retryable: false,
  });
}

function refused(why: keyof typeof WHY): ToolgateError {
  return new ToolgateError('CALLER_ERROR', `The path is not allowed: ${WHY[why]}.`, {
    retryable: true,
    suggestedFix: FIX,
  });
}

function fsError(err: unknown): ToolgateError {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    return new ToolgateError('CALLER_ERROR', 'There is no document at that path.', {
      suggestedFix: `${FIX} Check the spelling and folder.`,
    });
  }
  if (code === 'ELOOP') return refused('outside');
  if (code === 'EACCES' || code === 'EPERM') {
    return new ToolgateError('CALLER_ERROR', 'That document cannot be read.', { retryable: false });
  }
  return new ToolgateError('SERVER_ERROR', 'The documents folder could not be read.', { cause: err });
}

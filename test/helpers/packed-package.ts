import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** The result of `npm pack` on a fresh build of this repository. */
export interface PackedPackage {
  readonly tarball: string;
  /** Paths inside the package, as `npm pack` listed them. */
  readonly files: readonly string[];
  readonly bytes: number;
  readonly unpackedBytes: number;
}

/**
 * The repository as a fresh clone has it: every file git tracks or would track (ignored ones —
 * dist/, node_modules/ — left out), as they are in the working tree now.
 */
async function cloneFiles(): Promise<string[]> {
  const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO,
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout.split('\0').filter((path) => path !== '' && existsSync(join(REPO, path)));
}

/**
 * Copies the repository's files into a staging folder, as a fresh clone holds them (no dist/; the
 * repository's node_modules linked in place of `npm ci`), and runs plain `npm pack` there: the
 * package's own `prepack` must build it, and the tarball is what `npm publish` would upload and
 * what the README tells a user to make. The repository's own dist/ is never touched.
 */
export async function packToolgate(): Promise<PackedPackage> {
  const stage = mkdtempSync(join(tmpdir(), 'tg-pack-'));
  const clone = join(stage, 'toolgate');
  for (const file of await cloneFiles()) {
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    cpSync(join(REPO, file), join(clone, file));
  }
  symlinkSync(realpathSync(join(REPO, 'node_modules')), join(clone, 'node_modules'), 'dir');
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', stage], {
    cwd: clone,
    maxBuffer: 64 * 1024 * 1024,
  });
  const [packed] = JSON.parse(stdout.slice(Math.max(0, stdout.search(/^\[$/m)))) as Array<{
    filename: string;
    size: number;
    unpackedSize: number;
    files: Array<{ path: string }>;
  }>;
  return {
    tarball: join(stage, packed!.filename),
    files: packed!.files.map((f) => f.path),
    bytes: packed!.size,
    unpackedBytes: packed!.unpackedSize,
  };
}

/** The version of a package this repository has installed (so a consumer pins the same one). */
export function installedVersion(name: string): string {
  return (
    JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }
  ).version;
}

/**
 * Copies `fixture` (a folder under test/fixtures) to a fresh temporary folder and installs its
 * package.json.template there, with `__TARBALL__` and `__<NAME>__` placeholders filled from
 * `values`: the project has nothing of this repository but what the tarball holds.
 */
export async function installConsumer(fixture: string, values: Record<string, string>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'tg-consumer-'));
  const from = join(REPO, 'test/fixtures', fixture);
  for (const entry of readdirSync(from)) {
    if (entry !== 'package.json.template') cpSync(join(from, entry), join(dir, entry), { recursive: true });
  }
  let manifest = readFileSync(join(from, 'package.json.template'), 'utf8');
  for (const [name, value] of Object.entries(values)) manifest = manifest.replaceAll(`__${name}__`, value);
  if (manifest.includes('__')) throw new Error(`unfilled placeholder in ${fixture}/package.json.template`);
  writeFileSync(join(dir, 'package.json'), manifest);
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], {
    cwd: dir,
    maxBuffer: 64 * 1024 * 1024,
  });
  return dir;
}

/** Runs a program; resolves with its exit code and output whatever the code (never rejects on it). */
export async function runProgram(
  argv: readonly string[],
  options: { readonly cwd: string; readonly env?: Record<string, string>; readonly timeoutMs?: number },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const [command, ...args] = argv;
  try {
    const { stdout, stderr } = await run(command!, args, {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
      timeout: options.timeoutMs ?? 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string };
    return {
      code: typeof e.code === 'number' ? e.code : 1,
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? String(err),
    };
  }
}

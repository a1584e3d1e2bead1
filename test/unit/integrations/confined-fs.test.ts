import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolgateError } from '../../../libs/core/errors.js';
import { ConfinedFs } from '../../../libs/integrations/confined-fs.js';
import { relativePathSegments } from '../../../libs/integrations/path-rules.js';

const base = mkdtempSync(join(tmpdir(), 'tg-confined-'));
const root = join(base, 'docs');
const outside = join(base, 'outside');
const SECRET = 'TOP SECRET OUTSIDE THE ROOT';
let fs: ConfinedFs;

beforeAll(async () => {
  mkdirSync(join(root, 'handbook'), { recursive: true });
  mkdirSync(join(root, 'nested', 'deeper'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.md'), SECRET);
  writeFileSync(join(root, 'handbook', 'leave-policy.md'), '# Leave\nTwenty-five days a year.\n');
  writeFileSync(join(root, 'nested', 'deeper', 'file.md'), 'deep');
  writeFileSync(join(root, 'notes.txt'), 'plain notes');
  writeFileSync(join(root, 'script.sh'), 'echo hi');
  writeFileSync(join(root, '.env'), `API_KEY=${SECRET}`);
  writeFileSync(join(root, 'binary.md'), Buffer.from([0x23, 0x20, 0x00, 0x01, 0x02]));
  writeFileSync(join(root, 'big.md'), 'é'.repeat(3_000)); // 6 000 bytes of 2-byte characters
  symlinkSync('handbook/leave-policy.md', join(root, 'link-inside.md'));
  symlinkSync(join(outside, 'secret.md'), join(root, 'link-out.md'));
  symlinkSync('../outside', join(root, 'linkdir'));
  symlinkSync('.env', join(root, 'link-hidden.md'));
  symlinkSync('loop.md', join(root, 'loop.md'));
  execFileSync('mkfifo', [join(root, 'pipe.md')]);
  fs = await ConfinedFs.create(root, { maxBytes: 1_001, extensions: ['.md', '.txt'] });
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

async function refusal(path: string): Promise<ToolgateError> {
  try {
    await fs.readText(path);
  } catch (err) {
    if (err instanceof ToolgateError) return err;
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(path)} to be refused`);
}

describe('ConfinedFs reads inside the root', () => {
  it('reads a document by relative path', async () => {
    expect(await fs.readText('handbook/leave-policy.md')).toEqual({
      path: 'handbook/leave-policy.md',
      sizeBytes: 33,
      content: '# Leave\nTwenty-five days a year.\n',
      truncated: false,
    });
    expect((await fs.readText('nested/deeper/file.md')).content).toBe('deep');
  });

  it('follows a link that stays inside the root, and reports where it led', async () => {
    const read = await fs.readText('link-inside.md');
    expect(read.path).toBe('handbook/leave-policy.md');
    expect(read.content).toContain('Twenty-five days');
  });

  it('caps the bytes read and never cuts a character in half', async () => {
    const read = await fs.readText('big.md');
    expect(read.truncated).toBe(true);
    expect(read.sizeBytes).toBe(6_000);
    // 1 001 bytes allowed: 500 whole 2-byte characters; the half character is dropped.
    expect(read.content).toBe('é'.repeat(500));
  });
});

describe('ConfinedFs refuses', () => {
  it.each([
    ['parent traversal', '../outside/secret.md'],
    ['traversal in the middle', 'handbook/../../outside/secret.md'],
    ['a dot segment', './notes.txt'],
    ['an absolute POSIX path', '/etc/passwd'],
    ['the root spelled absolutely', `${root}/notes.txt`],
    ['a home path', '~/secret.md'],
    ['a NUL byte', 'notes.txt\u0000.md'],
    ['another control character', 'notes\n.txt'],
    ['Windows separators', '..\\outside\\secret.md'],
    ['a drive path', 'C:\\Windows\\win.ini'],
    ['a drive-relative path', 'C:notes.txt'],
    ['a UNC path', '\\\\server\\share\\x.md'],
    ['an alternate data stream', 'notes.txt:hidden'],
    ['a device name', 'CON'],
    ['a device name with extension', 'nul.txt'],
    ['a COM port', 'handbook/com1.md'],
    ['a trailing dot', 'notes.txt.'],
    ['a trailing space', 'notes.txt '],
    ['an 8.3 short name', 'HANDBO~1/leave-policy.md'],
    ['percent-encoded traversal', '%2e%2e/outside/secret.md'],
    ['percent-encoded slash', '..%2Foutside%2Fsecret.md'],
    ['fullwidth look-alikes of ../', '．．／outside/secret.md'],
    ['a bidi override', 'handbook/\u202edm.yciloP'],
    ['a hidden file', '.env'],
    ['an empty segment', 'handbook//leave-policy.md'],
    ['a trailing slash', 'handbook/'],
    ['an empty path', ''],
  ])('%s (%j) before touching the disk', async (_what, path) => {
    const err = await refusal(path);
    expect(err.code).toBe('CALLER_ERROR');
    expect(err.message).toMatch(/not allowed/);
    expect(err.suggestedFix).toMatch(/relative to the documents folder/);
  });

  it.each([
    ['a link to a file outside', 'link-out.md'],
    ['a path through a linked directory outside', 'linkdir/secret.md'],
    ['a link to a hidden file inside', 'link-hidden.md'],
    ['a link loop', 'loop.md'],
  ])('%s (%s), without revealing the target', async (_what, path) => {
    const err = await refusal(path);
    expect(err.code).toBe('CALLER_ERROR');
    expect(JSON.stringify({ message: err.message, fix: err.suggestedFix })).not.toContain('outside/secret');
    expect(err.message).not.toContain(SECRET);
  });

  it('a FIFO (without hanging), a directory, a binary file and other extensions', async () => {
    expect((await refusal('pipe.md')).message).toMatch(/not a regular file/);
    expect((await refusal('script.sh')).message).toMatch(/kind of file/);
    expect((await refusal('binary.md')).message).toMatch(/not a text document/);
    const dirFs = await ConfinedFs.create(root, { maxBytes: 100 });
    await expect(dirFs.readText('handbook')).rejects.toThrow(/not a regular file/);
  });

  it('a missing document is a fixable CALLER_ERROR', async () => {
    const err = await refusal('handbook/missing.md');
    expect(err).toMatchObject({
      code: 'CALLER_ERROR',
      retryable: true,
      message: 'There is no document at that path.',
    });
  });
});

describe('relativePathSegments', () => {
  it('splits an acceptable path and allows hidden segments only when asked', () => {
    expect(relativePathSegments('a/b.md')).toEqual({ ok: true, segments: ['a', 'b.md'] });
    expect(relativePathSegments('.well-known/x.md')).toEqual({ ok: false, why: 'hidden' });
    expect(relativePathSegments('.well-known/x.md', { allowHidden: true }).ok).toBe(true);
    expect(relativePathSegments('a/'.repeat(40) + 'x.md')).toEqual({ ok: false, why: 'too-deep' });
    expect(relativePathSegments(42)).toEqual({ ok: false, why: 'empty' });
  });
});

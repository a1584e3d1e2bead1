import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assetCandidates, resolveAsset } from '../../../libs/adapters/memory/asset-path.js';
import { luaScript } from '../../../libs/adapters/redis/index.js';

describe('assetCandidates', () => {
  it('looks beside a source module only', () => {
    expect(assetCandidates('./lua/x.lua', 'file:///repo/libs/adapters/redis/lua-script.ts')).toEqual([
      '/repo/libs/adapters/redis/lua/x.lua',
    ]);
  });

  it('for compiled output, looks beside it first and then in the source tree it was built from', () => {
    expect(
      assetCandidates('./migrations/', 'file:///repo/dist/libs/adapters/postgres/migration-files.js'),
    ).toEqual(['/repo/dist/libs/adapters/postgres/migrations/', '/repo/libs/adapters/postgres/migrations/']);
  });

  it('names every place it looked when the file is nowhere', () => {
    expect(() => resolveAsset('./nope.lua', 'file:///repo/dist/libs/a/b.js')).toThrow(
      /looked at \/repo\/dist\/libs\/a\/nope\.lua, \/repo\/libs\/a\/nope\.lua/,
    );
  });
});

describe('luaScript', () => {
  it.each([
    'idempotency-claim.lua',
    'idempotency-complete.lua',
    'idempotency-release.lua',
    'token-bucket-take.lua',
  ])('loads %s with a KEYS/ARGV/Returns header and its SHA1', (name) => {
    const script = luaScript(name);
    expect(script.source).toMatch(/-- KEYS\[1\]/);
    expect(script.source).toMatch(/-- Returns/);
    expect(script.sha1).toMatch(/^[0-9a-f]{40}$/);
    expect(luaScript(name)).toBe(script);
  });

  it('refuses a script that does not exist', () => {
    expect(() => luaScript('missing.lua')).toThrow(/not found/);
    expect(existsSync('libs/adapters/redis/lua/missing.lua')).toBe(false);
  });
});

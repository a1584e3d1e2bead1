import { describe, expect, it } from 'vitest';
import { loadStoreCatalogConfig, StoreCatalogConfigError } from '../../../services/catalog/index.js';

/** 32 bytes, base64: the shortest secret accepted. */
const SECRET = Buffer.alloc(32, 7).toString('base64');

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadStoreCatalogConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(StoreCatalogConfigError);
    return (err as StoreCatalogConfigError).problems;
  }
  throw new Error('expected the configuration to be refused');
}

describe('store catalog configuration', () => {
  it('nothing set (or set empty) configures nothing: the optional tools stay unregistered', () => {
    expect(loadStoreCatalogConfig({})).toEqual({});
    expect(loadStoreCatalogConfig({ TOOLGATE_PREVIEW_SECRET: '', LEGACY_FILING_URL: ' ' })).toEqual({});
  });

  it('reads every setting', () => {
    const config = loadStoreCatalogConfig({
      TOOLGATE_PREVIEW_SECRET: SECRET,
      LEGACY_FILING_URL: 'http://127.0.0.1:7410',
      TOOLGATE_DOCUMENTS_ROOT: '/srv/documents',
      TOOLGATE_REPORTS_DATABASE_URL: 'postgres://reader@replica:5432/filings',
      TOOLGATE_REPORTS_SCHEMA: 'legacy_filing',
    });
    expect(config.previewKey).toMatchObject({ alg: 'HS256' });
    expect(config.previewKey?.alg === 'HS256' && config.previewKey.secret.byteLength).toBe(32);
    expect(config).toMatchObject({
      legacyFilingUrl: 'http://127.0.0.1:7410',
      documentsRoot: '/srv/documents',
      reports: { databaseUrl: 'postgres://reader@replica:5432/filings', schema: 'legacy_filing' },
    });
  });

  it('refuses unusable values by variable name, never echoing them', () => {
    const short = Buffer.alloc(16, 1).toString('base64');
    const problems = problemsOf({
      TOOLGATE_PREVIEW_SECRET: short,
      LEGACY_FILING_URL: 'ftp://filing.example',
      TOOLGATE_REPORTS_DATABASE_URL: 'mysql://secret-password@db',
    });
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual([
      'LEGACY_FILING_URL',
      'TOOLGATE_REPORTS_DATABASE_URL',
    ]);
    expect(problems.join('\n')).not.toContain('secret-password');
    // Checked once the shape is valid: a short secret alone is refused too.
    const secretProblems = problemsOf({ TOOLGATE_PREVIEW_SECRET: short });
    expect(secretProblems).toEqual([expect.stringMatching(/^TOOLGATE_PREVIEW_SECRET: .*32 bytes/)]);
    expect(secretProblems.join('\n')).not.toContain(short);
  });

  it('a reports schema without a reports database is a mistake, not ignored', () => {
    expect(problemsOf({ TOOLGATE_REPORTS_SCHEMA: 'legacy_filing' })).toEqual([
      'TOOLGATE_REPORTS_SCHEMA: set without TOOLGATE_REPORTS_DATABASE_URL',
    ]);
  });
});

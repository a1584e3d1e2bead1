import { z } from 'zod';
import { hmacPreviewKey, type PreviewKey } from '../../libs/patterns/preview/preview-key.js';
import { configErrorClass, type Environment } from '../../libs/runtime/env.js';

const optionalText = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v));

/** The environment the store catalog reads; every variable is optional (see {@link StoreCatalogConfig}). */
const EnvSchema = z.object({
  TOOLGATE_PREVIEW_SECRET: optionalText,
  LEGACY_FILING_URL: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
  TOOLGATE_DOCUMENTS_ROOT: optionalText,
  TOOLGATE_REPORTS_DATABASE_URL: optionalText.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'expected postgres://…')
      .optional(),
  ),
  TOOLGATE_REPORTS_SCHEMA: optionalText.pipe(
    z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'use a lower-case SQL identifier')
      .optional(),
  ),
});

/**
 * The store catalog's own settings (the executor loads the catalog by module name, so the catalog
 * reads its settings itself rather than through the executor's config). A tool whose backend is not
 * configured is not registered; nothing here is required.
 */
export interface StoreCatalogConfig {
  /**
   * TOOLGATE_PREVIEW_SECRET: base64 of at least 32 random bytes (`openssl rand -base64 32`), the
   * HS256 key of purchase-order preview tokens. Every executor of a deployment needs the same one,
   * or a token previewed on one executor is refused on another. Unset: no purchase-order tools.
   */
  readonly previewKey?: PreviewKey;
  /** LEGACY_FILING_URL: base URL of the legacy filing service. Unset: no `submit_filing`. */
  readonly legacyFilingUrl?: string;
  /** TOOLGATE_DOCUMENTS_ROOT: the one directory `read_document` may read. Unset: no `read_document`. */
  readonly documentsRoot?: string;
  /**
   * TOOLGATE_REPORTS_DATABASE_URL: the database holding the legacy filings (a read replica in
   * production) for `run_report_query`; TOOLGATE_REPORTS_SCHEMA names the schema of the
   * `legacy_filings` table (default: the connection's search_path). Unset: no `run_report_query`.
   */
  readonly reports?: { readonly databaseUrl: string; readonly schema?: string };
}

/** Thrown with every problem listed by variable name; values (secrets, passwords) are never echoed. */
export class StoreCatalogConfigError extends configErrorClass('store catalog', 'StoreCatalogConfigError') {}

/**
 * Parses the catalog's settings from `env` (default: the process environment). Throws
 * {@link StoreCatalogConfigError} for a value that is set but unusable (a preview secret that is not
 * base64 or shorter than 32 bytes, a URL that is not one, a schema that is not an identifier,
 * TOOLGATE_REPORTS_SCHEMA without TOOLGATE_REPORTS_DATABASE_URL).
 */
export function loadStoreCatalogConfig(env: Environment = process.env): StoreCatalogConfig {
  // Every variable is optional, so no problem is "required, but not set".
  const e = StoreCatalogConfigError.parse(EnvSchema, env);
  const problems: string[] = [];
  let previewKey: PreviewKey | undefined;
  if (e.TOOLGATE_PREVIEW_SECRET !== undefined) {
    try {
      previewKey = hmacPreviewKey(e.TOOLGATE_PREVIEW_SECRET);
    } catch (err) {
      problems.push(`TOOLGATE_PREVIEW_SECRET: ${(err as Error).message}`);
    }
  }
  if (e.TOOLGATE_REPORTS_SCHEMA !== undefined && e.TOOLGATE_REPORTS_DATABASE_URL === undefined) {
    problems.push('TOOLGATE_REPORTS_SCHEMA: set without TOOLGATE_REPORTS_DATABASE_URL');
  }
  if (problems.length > 0) throw new StoreCatalogConfigError(problems);
  return {
    ...(previewKey === undefined ? {} : { previewKey }),
    ...(e.LEGACY_FILING_URL === undefined ? {} : { legacyFilingUrl: e.LEGACY_FILING_URL }),
    ...(e.TOOLGATE_DOCUMENTS_ROOT === undefined ? {} : { documentsRoot: e.TOOLGATE_DOCUMENTS_ROOT }),
    ...(e.TOOLGATE_REPORTS_DATABASE_URL === undefined
      ? {}
      : {
          reports: {
            databaseUrl: e.TOOLGATE_REPORTS_DATABASE_URL,
            ...(e.TOOLGATE_REPORTS_SCHEMA === undefined ? {} : { schema: e.TOOLGATE_REPORTS_SCHEMA }),
          },
        }),
  };
}

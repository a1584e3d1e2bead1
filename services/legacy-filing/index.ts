/** The fake legacy filing service (a real HTTP server over Postgres) and its modern client. */
export {
  startLegacyFilingServer,
  type LegacyFilingServer,
  type LegacyFilingServerOptions,
  type LegacyFilingStats,
} from './server.js';
export { LegacyFaults, type LegacyFaultRates, type SubmitFault } from './faults.js';
export { ensureLegacyFilingSchema } from './filing-schema.js';
export {
  LegacyFilingClient,
  LEGACY_FILING_DOWNSTREAM,
  FORM_TYPES,
  legacyPeriod,
  type FilingKey,
  type FilingRecord,
  type FilingSubmission,
  type FormType,
  type LegacyFilingClientOptions,
} from './client.js';
export { errorForLegacyFault } from './legacy-faults.js';
export { loadLegacyFilingConfig, LegacyFilingConfigError, type LegacyFilingConfig } from './config.js';

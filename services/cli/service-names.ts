/**
 * The names of the service commands (`toolgate executor`, …). Kept apart from `serve.ts`, which
 * imports every service's modules, so the CLI's other commands load none of them; a unit test
 * holds it equal to the keys of `SERVICE_COMMANDS`.
 */
export const SERVICE_NAMES: ReadonlySet<string> = new Set([
  'executor',
  'audit-sink',
  'reconciler',
  'ops-console',
  'mcp-gateway',
]);

/**
 * `toolgate/executor`: what a deployment needs to run its own tools behind toolgate — the catalog
 * contract, the executor factory over adapters, and the executor process from its environment.
 *
 * ```ts
 * // my-tools.ts, run with `toolgate executor --catalog ./my-tools.ts`
 * import { defineTool } from 'toolgate';
 * import { defineCatalog } from 'toolgate/executor';
 * export default defineCatalog({ tools: [lookupTicket, closeTicket] });
 * ```
 */
export {
  defineCatalog,
  NO_RULES_POLICY_VERSION,
  type AnyToolDefinition,
  type Catalog,
  type CatalogDefinition,
  type CatalogEnv,
  type CatalogFactory,
} from '../../libs/catalog/index.js';
export { loadCatalogFactory } from '../../libs/runtime/catalog-module.js';
export {
  createExecutor,
  EXECUTOR_DEFAULTS,
  type ExecutorInstrumentation,
  type ExecutorOptions,
  type ExecutorSettings,
  type GuardedExecutor,
} from './create-executor.js';
export type { Executor } from './executor.js';
export { loadExecutorConfig, ExecutorConfigError, type ExecutorConfig } from './config.js';
export { createExecutorService, type ExecutorServiceOptions } from './service.js';
export type { Service } from '../../libs/runtime/service.js';

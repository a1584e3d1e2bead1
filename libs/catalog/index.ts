/** The catalog contract: the tools, rules and outbound limits an executor runs. */
export {
  defineCatalog,
  NO_RULES_POLICY_VERSION,
  type AnyToolDefinition,
  type Catalog,
  type CatalogDefinition,
  type CatalogEnv,
  type CatalogFactory,
} from './catalog.js';

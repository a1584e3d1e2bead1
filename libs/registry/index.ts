/** The tool registry: definitions, versions, per-tenant scoping and provider exports. */
export type * from './tool-definition.js';
export { defineTool, DEFAULT_RETRY, DEFAULT_TIMEOUT_MS } from './define-tool.js';
export type { ToolDefinitionInput } from './define-tool.js';
export { ToolDefinitionError } from './definition-error.js';
export { definitionProblems, assertValidDefinition } from './validate-definition.js';
export { ToolRegistry } from './tool-registry.js';
export type {
  ResolveResult,
  RegisterOptions,
  TenantOverrideOptions,
  RegistryEntryInfo,
} from './tool-registry.js';
export { normalizeStrictNulls } from './strict-nulls.js';
export { validateArguments, validateArgumentsNow } from './validate-arguments.js';
export type { ArgumentsCheck } from './validate-arguments.js';
export { DEFAULT_PRESENTATION_MAX_CHARS, presentCall, presentParsedCall } from './present-call.js';
export type {
  PresentableTool,
  Presentation,
  PresentedCall,
  PresentedField,
  PresentOptions,
} from './present-call.js';
export { compareSemver, isSemver, parseSemver } from './semver.js';
export type { SemverTriple } from './semver.js';
export { suggestNames, didYouMean } from './did-you-mean.js';
export { TOOL_NAME_PATTERN, isValidToolName } from './tool-name.js';
export { inputJsonSchema } from './input-json-schema.js';
export type { ExportableTool, JsonSchema } from './input-json-schema.js';
export { toStrictJsonSchema } from './strict-schema.js';
export { toOpenAITools } from './export-openai.js';
export type { OpenAIExportOptions } from './export-openai.js';
export { toAnthropicTools } from './export-anthropic.js';
export { checkOpenAIStrictTool, checkAnthropicTool } from './provider-rules.js';
export {
  OPENAI_STRICT_FORMATS,
  OPENAI_STRICT_KEYWORDS,
  OPENAI_STRICT_LIMITS,
} from './openai-strict-subset.js';
export type { OpenAIStrictLimits } from './openai-strict-subset.js';

import { ToolgateError } from '../core/errors.js';
import { didYouMean, suggestNames } from './did-you-mean.js';
import type { ToolDefinition } from './tool-definition.js';
import { quoteForMessage } from './tool-name.js';

/**
 * UNKNOWN_TOOL for a name the tenant cannot resolve. `visibleNames` must hold only names this
 * tenant may call: the message is shown to the model and must not reveal other tenants' tools.
 */
export function unknownToolError(name: string, visibleNames: Iterable<string>): ToolgateError {
  const suggestions = suggestNames(name, visibleNames);
  const hint = didYouMean(suggestions);
  const first = suggestions[0];
  return new ToolgateError(
    'UNKNOWN_TOOL',
    `Unknown tool ${quoteForMessage(name)}. ${hint || 'No similar tool is available; use one of the tools you were given.'}`,
    first === undefined ? {} : { suggestedFix: `Call '${first}' instead, with its own arguments.` },
  );
}

/** UNKNOWN_TOOL for a version of a known name that does not exist (for this tenant). */
export function unknownVersionError(
  name: string,
  version: string,
  available: readonly { readonly version: string; readonly deprecated: boolean }[],
): ToolgateError {
  const listed = available.map((v) => (v.deprecated ? `${v.version} (deprecated)` : v.version)).join(', ');
  return new ToolgateError(
    'UNKNOWN_TOOL',
    `Tool '${name}' has no version ${quoteForMessage(version, 32)}. Available versions: ${listed}.`,
    { suggestedFix: `Call '${name}' without a version to use its current one.` },
  );
}

/**
 * TOOL_DEPRECATED for a deprecated version: its reason, and its replacement when the replacement is
 * one this tenant can call (`replacementVisible`).
 */
export function deprecatedError(def: ToolDefinition, replacementVisible: boolean): ToolgateError {
  const reason = (def.deprecated?.reason ?? 'no reason recorded').replace(/[.\s]+$/, '');
  const instead = replacementVisible ? def.deprecated?.useInstead : undefined;
  return new ToolgateError(
    'TOOL_DEPRECATED',
    `Tool '${def.name}' version ${def.version} is deprecated: ${reason}.` +
      (instead === undefined ? '' : ` Use '${instead}' instead.`),
    instead === undefined ? {} : { suggestedFix: `Call '${instead}' instead.` },
  );
}

/**
 * A tool definition (or a set of them being exported to a provider) is wrong. Raised at definition,
 * registration or export time — a programming error found at startup, never a per-call outcome, so it
 * is deliberately not a ToolgateError and never reaches a model.
 */
export class ToolDefinitionError extends Error {
  /** The tool the problems belong to (name as given, possibly invalid). */
  readonly tool: string;
  /** Every problem found, each a complete sentence naming the field. */
  readonly problems: readonly string[];

  constructor(tool: string, problems: readonly string[]) {
    super(`Invalid tool definition '${tool}': ${problems.join(' ')}`);
    this.name = 'ToolDefinitionError';
    this.tool = tool;
    this.problems = Object.freeze([...problems]);
  }
}

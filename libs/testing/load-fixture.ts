import { readFile } from 'node:fs/promises';
import { agentFixtureSchema, type AgentFixture } from './fixture-schema.js';

/**
 * Reads and validates one fixture file. Rejects with the file name and every schema problem
 * (`rounds.1.expect.calls.call_x.outcome: ...`) when the JSON does not match the fixture format,
 * so a typo in a fixture fails loudly instead of silently asserting less.
 */
export async function loadFixture(path: string): Promise<AgentFixture> {
  const text = await readFile(path, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path}: not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  return parseFixture(json, path);
}

/** Validates a fixture already in memory; `source` names it in the error. */
export function parseFixture(json: unknown, source = 'fixture'): AgentFixture {
  const parsed = agentFixtureSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new Error(`${source}: not a valid agent fixture:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadFixture } from '../../../libs/testing/load-fixture.js';
import type { AgentFixture } from '../../../libs/testing/fixture-schema.js';

/** The agent fixture directory. */
export const AGENT_FIXTURES_DIR = join(import.meta.dirname, '../../fixtures/agent');

/** Every fixture file in the directory, by fixture name. */
export async function loadAgentFixtures(): Promise<Map<string, AgentFixture>> {
  const files = readdirSync(AGENT_FIXTURES_DIR).filter((f) => f.endsWith('.json'));
  const fixtures = new Map<string, AgentFixture>();
  for (const file of files.sort()) {
    const fixture = await loadFixture(join(AGENT_FIXTURES_DIR, file));
    fixtures.set(fixture.name, fixture);
  }
  return fixtures;
}

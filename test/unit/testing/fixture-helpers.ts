import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll } from 'vitest';
import { createAgentHarness, type AgentHarnessOptions } from '../../../services/embedded/agent-harness.js';
import type { AgentFixture } from '../../../libs/testing/fixture-schema.js';
import { loadFixture } from '../../../libs/testing/load-fixture.js';
import type { NetworkGuard } from '../../../libs/testing/no-network.js';
import { runFixture, type FixtureRun } from '../../../libs/testing/run-fixture.js';
import { storeHarnessOptions } from '../../../services/demo/store-harness.js';
import { offlineTestFile } from '../../helpers/offline.js';

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

/** The fixtures and the network guard of one test file, readable from its first test on. */
export interface OfflineAgentFixtures {
  fixtures(): Map<string, AgentFixture>;
  /** What outbound connections were refused while the file ran. */
  guard(): NetworkGuard;
}

/**
 * Registers hooks that forbid outbound network for the calling test file and load every fixture once
 * before its tests; the guard is lifted after them.
 */
export function offlineAgentFixtures(): OfflineAgentFixtures {
  const guard = offlineTestFile();
  let fixtures: Map<string, AgentFixture> | undefined;
  beforeAll(async () => {
    fixtures = await loadAgentFixtures();
  });
  const loaded = (): Map<string, AgentFixture> => {
    if (fixtures === undefined) throw new Error('agent fixtures are read before they were loaded');
    return fixtures;
  };
  return { fixtures: loaded, guard };
}

/**
 * Replays `fixture` on a toolgate of its own (fixtures refund the same orders), stopped afterwards.
 * Default: the store demo's catalog, principals and world, fresh for this run.
 */
export async function replayOnOwnHarness(
  fixture: AgentFixture,
  options: AgentHarnessOptions = storeHarnessOptions(),
): Promise<FixtureRun> {
  const harness = await createAgentHarness(options);
  try {
    return await runFixture(fixture, harness);
  } finally {
    await harness.stop();
  }
}

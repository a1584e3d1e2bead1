import { afterAll, beforeAll, describe, it } from 'vitest';
import type { DemoToolgate } from '../../../services/demo/demo-toolgate.js';
import { startEmbeddedDemo } from '../../../services/demo/embedded-demo.js';
import { runRefundStory } from '../../../services/demo/story.js';
import { REFUND_STORY_EXPECTATIONS, type RefundStoryRun } from '../../helpers/refund-story-expectations.js';

let toolgate: DemoToolgate;
let run: RefundStoryRun;

beforeAll(async () => {
  toolgate = await startEmbeddedDemo();
  const lines: string[] = [];
  const report = await runRefundStory(toolgate, (line) => lines.push(line));
  run = { report, lines, downstreams: toolgate.downstreams };
}, 30_000);

afterAll(async () => {
  await toolgate.stop();
});

describe('the refund story in embedded mode', () => {
  for (const expectation of REFUND_STORY_EXPECTATIONS) {
    it(expectation.name, () => expectation.check(run));
  }
});

import { describe, expect, it } from 'vitest';
import { setupFailureText } from '../../helpers/setup-failure.js';

describe('the test run when a server cannot be provided', () => {
  it('says that no test ran and why, with the hint, instead of "No test files found"', () => {
    const err = new Error(
      "Could not start the local Kafka cluster: node 2 exited (1)\nStart it by hand with 'npm run kafka-cluster:up', or set KAFKA_CLUSTER_BROKERS.",
    );
    expect(setupFailureText(err)).toBe(
      '\nThe tests did not run: a server they need is not available.\n' +
        'Could not start the local Kafka cluster: node 2 exited (1)\n' +
        "Start it by hand with 'npm run kafka-cluster:up', or set KAFKA_CLUSTER_BROKERS.\n",
    );
    expect(setupFailureText(err)).not.toContain('No test files found');
  });
});

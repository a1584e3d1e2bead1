import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { silentLog } from '../../../deploy/local/log.js';
import { TOOLGATE_RULES_FILE } from '../../../deploy/local/prometheus-config.js';
import { ensurePrometheusInstalled } from '../../../deploy/local/prometheus-server.js';

const RULES_DIR = fileURLToPath(new URL('../../../deploy/prometheus/rules/', import.meta.url));

function promtool(args: string[]): { status: number | null; output: string } {
  const r = spawnSync('promtool', args, { cwd: RULES_DIR, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/**
 * toolgate's Prometheus rules through promtool (Debian's package, installed when missing; a machine
 * that cannot install it fails here, never skips): the file is valid, and each alert fires on the
 * series it is meant for and stays quiet on the near misses (toolgate-alerts.test.yml).
 */
describe('Prometheus rules', () => {
  ensurePrometheusInstalled(silentLog);

  it('pass promtool check rules', () => {
    const r = promtool(['check', 'rules', TOOLGATE_RULES_FILE]);
    expect(r.output).toMatch(/SUCCESS: \d+ rules found/);
    expect(r.status, r.output).toBe(0);
  });

  it('pass their promtool unit tests', () => {
    const r = promtool(['test', 'rules', 'toolgate-alerts.test.yml']);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('SUCCESS');
  });

  it('name every alert the operations issue asks for', () => {
    const text = readFileSync(TOOLGATE_RULES_FILE, 'utf8');
    for (const alert of [
      'ToolgateCircuitBreakerOpen',
      'ToolgateDeadLettersRising',
      'ToolgateConsumerLagGrowing',
      'ToolgateUnresolvedCallsNotSettling',
      'ToolgatePolicyViolationsJump',
    ]) {
      expect(text).toContain(`alert: ${alert}`);
    }
  });
});

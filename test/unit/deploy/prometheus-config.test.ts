import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  loadPrometheusSettings,
  parseScrapeTargets,
  renderPrometheusConfig,
  TOOLGATE_RULES_FILE,
} from '../../../deploy/local/prometheus-config.js';

describe('local Prometheus settings', () => {
  it('defaults to 19090, the executor on 9464, 1 s, toolgate rules, a run dir in the cache', () => {
    const s = loadPrometheusSettings('/home/dev/.cache/toolgate', {});
    expect(s).toEqual({
      host: '127.0.0.1',
      port: 19090,
      intervalSec: 1,
      jobs: [{ job: 'executor', targets: ['127.0.0.1:9464'] }],
      ruleFiles: [TOOLGATE_RULES_FILE],
      runDir: '/home/dev/.cache/toolgate/run/prometheus-19090',
    });
    expect(TOOLGATE_RULES_FILE.endsWith('deploy/prometheus/rules/toolgate-alerts.yml')).toBe(true);
  });

  it('groups targets by job and rejects malformed entries by name', () => {
    expect(parseScrapeTargets('executor=127.0.0.1:9464, executor=127.0.0.1:9465,audit-sink=h:1')).toEqual([
      { job: 'executor', targets: ['127.0.0.1:9464', '127.0.0.1:9465'] },
      { job: 'audit-sink', targets: ['h:1'] },
    ]);
    expect(() => parseScrapeTargets('executor')).toThrow(/job=host:port/);
    expect(() => parseScrapeTargets('executor=http://h:1')).toThrow(/job=host:port/);
    expect(() => loadPrometheusSettings('/c', { PROMETHEUS_PORT: 'x' })).toThrow(/PROMETHEUS_PORT/);
    expect(() => loadPrometheusSettings('/c', { PROMETHEUS_TARGETS: 'a=b' })).toThrow(/PROMETHEUS_TARGETS/);
  });

  it('renders a config scraping itself and every job at the interval, with the rule files', () => {
    const config = parse(
      renderPrometheusConfig({
        host: '127.0.0.1',
        port: 29090,
        intervalSec: 2,
        jobs: [{ job: 'executor', targets: ['127.0.0.1:1', '127.0.0.1:2'] }],
        ruleFiles: ['/r/a.yml'],
        runDir: '/tmp/x',
      }),
    ) as Record<string, unknown>;
    expect(config).toEqual({
      global: { scrape_interval: '2s', evaluation_interval: '2s', scrape_timeout: '2s' },
      rule_files: ['/r/a.yml'],
      scrape_configs: [
        { job_name: 'prometheus', static_configs: [{ targets: ['127.0.0.1:29090'] }] },
        {
          job_name: 'executor',
          metrics_path: '/metrics',
          static_configs: [{ targets: ['127.0.0.1:1', '127.0.0.1:2'] }],
        },
      ],
    });
  });
});

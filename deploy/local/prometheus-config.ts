import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { z } from 'zod';

/** Port of the launcher's Prometheus (env PROMETHEUS_PORT); docker-compose's stays on 9090. */
export const DEFAULT_PROMETHEUS_PORT = 19090;
/** Where the executor serves /metrics unless HTTP_PORT says otherwise (services/executor/config.ts). */
export const DEFAULT_SCRAPE_TARGETS = 'executor=127.0.0.1:9464';
/** toolgate's rules, loaded by every Prometheus the launcher starts unless told otherwise. */
export const TOOLGATE_RULES_FILE = fileURLToPath(
  new URL('../prometheus/rules/toolgate-alerts.yml', import.meta.url),
);

/** One scrape job: a name (Prometheus' `job` label) and the host:port addresses serving /metrics. */
export interface ScrapeJob {
  readonly job: string;
  readonly targets: readonly string[];
}

/** Everything one local Prometheus instance needs. */
export interface PrometheusSettings {
  readonly host: string;
  readonly port: number;
  /** Scrape and rule-evaluation interval, seconds: short, so a test sees data within seconds. */
  readonly intervalSec: number;
  readonly jobs: readonly ScrapeJob[];
  /** Absolute paths of rule files. */
  readonly ruleFiles: readonly string[];
  /** Holds the generated config, the pid file, the log and the TSDB (`data/`). */
  readonly runDir: string;
}

const target = /^[^\s:/=,]+:\d{1,5}$/;
const EnvSchema = z.object({
  PROMETHEUS_PORT: z.coerce.number().int().min(1).max(65535).default(DEFAULT_PROMETHEUS_PORT),
  /** `job=host:port` entries, comma-separated; a job named twice gets both targets. */
  PROMETHEUS_TARGETS: z
    .string()
    .default(DEFAULT_SCRAPE_TARGETS)
    .transform((v, ctx) => {
      try {
        return parseScrapeTargets(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  PROMETHEUS_INTERVAL_SEC: z.coerce.number().int().min(1).max(300).default(1),
});

/**
 * Parses the launcher's Prometheus settings from `env` (defaults: 127.0.0.1:19090, the executor on
 * 127.0.0.1:9464 scraped every second, toolgate's rules). `cacheDir` is the launchers' cache
 * (deploy/local/config.ts); the instance lives in `<cacheDir>/run/prometheus-<port>`. Throws a zod
 * error naming the bad variable.
 */
export function loadPrometheusSettings(
  cacheDir: string,
  env: NodeJS.ProcessEnv = process.env,
): PrometheusSettings {
  const e = EnvSchema.parse(env);
  return {
    host: '127.0.0.1',
    port: e.PROMETHEUS_PORT,
    intervalSec: e.PROMETHEUS_INTERVAL_SEC,
    jobs: e.PROMETHEUS_TARGETS,
    ruleFiles: [TOOLGATE_RULES_FILE],
    runDir: prometheusRunDir(cacheDir, e.PROMETHEUS_PORT),
  };
}

/** The run directory of the instance on `port`. */
export function prometheusRunDir(cacheDir: string, port: number): string {
  return join(cacheDir, 'run', `prometheus-${port}`);
}

/** Parses `job=host:port[,job=host:port…]`; throws naming the first bad entry. */
export function parseScrapeTargets(text: string): ScrapeJob[] {
  const jobs = new Map<string, string[]>();
  for (const entry of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [job, address, extra] = entry.split('=');
    if (extra !== undefined || !job || !/^[a-zA-Z_][\w-]*$/.test(job) || !address || !target.test(address)) {
      throw new Error(`expected job=host:port, got ${JSON.stringify(entry)}`);
    }
    jobs.set(job, [...(jobs.get(job) ?? []), address]);
  }
  return [...jobs].map(([job, targets]) => ({ job, targets }));
}

/**
 * The prometheus.yml of an instance: every job scraped at `intervalSec` on /metrics, rules evaluated
 * at the same interval, plus a `prometheus` job for the instance itself. Pure.
 */
export function renderPrometheusConfig(s: PrometheusSettings): string {
  const interval = `${s.intervalSec}s`;
  return stringify({
    global: { scrape_interval: interval, evaluation_interval: interval, scrape_timeout: interval },
    rule_files: [...s.ruleFiles],
    scrape_configs: [
      { job_name: 'prometheus', static_configs: [{ targets: [`${s.host}:${s.port}`] }] },
      ...s.jobs.map((j) => ({
        job_name: j.job,
        metrics_path: '/metrics',
        static_configs: [{ targets: [...j.targets] }],
      })),
    ],
  });
}

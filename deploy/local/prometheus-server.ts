import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LauncherLog } from './log.js';
import type { ManagedServer } from './managed-server.js';
import { renderPrometheusConfig, type PrometheusSettings } from './prometheus-config.js';

const INSTALL_SCRIPT = fileURLToPath(new URL('prometheus-install.sh', import.meta.url));

/**
 * Makes sure `prometheus` and `promtool` are on PATH, installing them from Debian's packages
 * (deploy/local/prometheus-install.sh, needs root) when they are not. Returns Prometheus' version
 * line; throws with the installer's output when it cannot install them.
 */
export function ensurePrometheusInstalled(log: LauncherLog): string {
  const version = (): string | undefined => {
    const r = spawnSync('prometheus', ['--version'], { encoding: 'utf8' });
    return r.status === 0 ? `${r.stdout}${r.stderr}`.split('\n')[0] : undefined;
  };
  const present = version();
  if (present !== undefined && spawnSync('promtool', ['--version']).status === 0) return present;
  log('prometheus: not installed; installing it from the Debian packages');
  const r = spawnSync('bash', [INSTALL_SCRIPT], { encoding: 'utf8' });
  const installed = r.status === 0 ? version() : undefined;
  if (installed === undefined) {
    throw new Error(
      `prometheus could not be installed (bash ${INSTALL_SCRIPT} exited ${r.status ?? r.signal}):\n` +
        `${r.stdout}${r.stderr}`.trim(),
    );
  }
  return installed;
}

/** True when Prometheus at `baseUrl` says it is ready (GET /-/ready → 200). One 2 s attempt. */
export async function prometheusAnswers(baseUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${baseUrl}/-/ready`, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * A local Prometheus as a {@link ManagedServer}: the Debian package's binary with a generated
 * prometheus.yml (see renderPrometheusConfig), its TSDB in `<runDir>/data`, listening on
 * `host:port` only. The config is written afresh on every start; the data directory is kept across
 * restarts of the same instance (`prepare` removes nothing else). `--config.file=<runDir>/…` on the
 * command line is what identifies the process as this instance.
 */
export function prometheusServer(s: PrometheusSettings): ManagedServer {
  const configFile = join(s.runDir, 'prometheus.yml');
  const baseUrl = `http://${s.host}:${s.port}`;
  return {
    name: 'prometheus',
    marker: `--config.file=${configFile}`,
    runDir: s.runDir,
    pidFile: join(s.runDir, 'prometheus.pid'),
    logFile: join(s.runDir, 'prometheus.log'),
    address: baseUrl,
    host: s.host,
    ports: [s.port],
    portVariables: ['PROMETHEUS_PORT'],
    answers: () => prometheusAnswers(baseUrl),
    prepare(log) {
      const version = ensurePrometheusInstalled(log);
      mkdirSync(join(s.runDir, 'data'), { recursive: true });
      writeFileSync(configFile, renderPrometheusConfig(s));
      rmSync(join(s.runDir, 'prometheus.log'), { force: true });
      log(`prometheus: ${version}; scraping ${s.jobs.map((j) => j.job).join(', ')} every ${s.intervalSec} s`);
      return Promise.resolve({
        command: 'prometheus',
        args: [
          `--config.file=${configFile}`,
          `--storage.tsdb.path=${join(s.runDir, 'data')}`,
          '--storage.tsdb.retention.time=2d',
          `--web.listen-address=${s.host}:${s.port}`,
          // Lets a test or an operator reload the generated config without a restart (POST /-/reload).
          '--web.enable-lifecycle',
        ],
        cwd: s.runDir,
        logFile: join(s.runDir, 'prometheus.log'),
      });
    },
  };
}

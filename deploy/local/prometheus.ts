/**
 * `npm run prometheus:up` / `prometheus:down` (also `tsx deploy/local/prometheus.ts status|tidy`): a
 * local Prometheus on 127.0.0.1:$PROMETHEUS_PORT (19090) scraping $PROMETHEUS_TARGETS
 * (`job=host:port,…`; default the executor on 127.0.0.1:9464) every $PROMETHEUS_INTERVAL_SEC (1) s
 * with toolgate's alert rules; installed from Debian's packages on first use.
 */
import { runLauncherProcess } from './launcher-cli.js';
import { loadPrometheusSettings } from './prometheus-config.js';
import { prometheusServer } from './prometheus-server.js';

await runLauncherProcess((cfg) => prometheusServer(loadPrometheusSettings(cfg.cacheDir)));

import { readdirSync, readFileSync } from 'node:fs';

/** One PromQL query of one dashboard panel, with the dashboard's variables substituted. */
export interface PanelQuery {
  readonly dashboard: string;
  readonly panel: string;
  readonly refId: string;
  readonly expr: string;
}

const DIR = new URL('../../../deploy/grafana/dashboards/', import.meta.url);

/**
 * Every target of every panel of every dashboard in deploy/grafana/dashboards, with `$name` template
 * variables replaced from `variables` and Grafana's `$__rate_interval` by `rateInterval`. Throws when
 * a query uses a variable `variables` does not give, so a new variable cannot go untested.
 */
export function dashboardQueries(
  variables: Readonly<Record<string, string>>,
  rateInterval: string,
): PanelQuery[] {
  const out: PanelQuery[] = [];
  for (const file of readdirSync(DIR).filter((f) => f.endsWith('.json'))) {
    const dashboard = JSON.parse(readFileSync(new URL(file, DIR), 'utf8')) as {
      uid: string;
      panels: { title: string; targets: { refId: string; expr: string }[] }[];
    };
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) {
        const expr = target.expr
          .replaceAll('$__rate_interval', rateInterval)
          .replace(/\$(\w+)/g, (_, name: string) => {
            const value = variables[name];
            if (value === undefined)
              throw new Error(`${dashboard.uid} / ${panel.title}: no value for $${name}`);
            return value;
          });
        out.push({ dashboard: dashboard.uid, panel: panel.title, refId: target.refId, expr });
      }
    }
  }
  return out;
}

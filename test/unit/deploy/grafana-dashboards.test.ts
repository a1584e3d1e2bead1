import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { dashboardFileText } from '../../../deploy/grafana/build-dashboards.js';
import { renderDashboard } from '../../../deploy/grafana/dashboard-model.js';
import { DASHBOARDS } from '../../../deploy/grafana/dashboards.js';

interface Target {
  refId?: string;
  expr?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  id?: number;
  type?: string;
  title?: string;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
}
interface Dashboard {
  uid?: string;
  title?: string;
  panels?: Panel[];
  templating?: { list?: { name: string; datasource?: { uid?: string }; query?: { query?: string } }[] };
}

const dir = new URL('../../../deploy/grafana/dashboards/', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
const dashboards = files.map((file) => ({
  file,
  text: readFileSync(new URL(file, dir), 'utf8'),
}));

const datasources = parse(
  readFileSync(
    new URL('../../../deploy/grafana/provisioning/datasources/prometheus.yml', import.meta.url),
    'utf8',
  ),
) as { datasources: { uid: string; type: string; url: string }[] };
const prometheus = datasources.datasources.find((d) => d.type === 'prometheus');

describe('Grafana dashboards', () => {
  it('provision one Prometheus datasource with a fixed uid', () => {
    expect(datasources.datasources).toHaveLength(1);
    expect(prometheus?.uid).toMatch(/^[\w-]+$/);
    expect(prometheus?.url).toBe('http://prometheus:9090');
  });

  it('has the six dashboards, each file equal to its spec', () => {
    expect(files.sort()).toEqual(DASHBOARDS.map((d) => `${d.uid}.json`).sort());
    expect(DASHBOARDS.map((d) => d.uid)).toEqual([
      'toolgate-overview',
      'toolgate-tool',
      'toolgate-downstreams',
      'toolgate-dlq',
      'toolgate-cost',
      'toolgate-mcp',
    ]);
    for (const spec of DASHBOARDS) {
      const text = readFileSync(new URL(`${spec.uid}.json`, dir), 'utf8');
      expect(text, `${spec.uid}.json is stale: run npx tsx deploy/grafana/build-dashboards.ts`).toBe(
        dashboardFileText(renderDashboard(spec)),
      );
    }
  });

  for (const { file, text } of dashboards) {
    describe(file, () => {
      const dashboard = JSON.parse(text) as Dashboard;
      const panels = dashboard.panels ?? [];

      it('is valid JSON with a uid, a title and panels', () => {
        expect(dashboard.uid).toBe(file.replace(/\.json$/, ''));
        expect(dashboard.title).toBeTruthy();
        expect(panels.length).toBeGreaterThan(2);
      });

      it('has unique panel ids', () => {
        const ids = panels.map((p) => p.id);
        expect(ids.every((id) => Number.isInteger(id))).toBe(true);
        expect(new Set(ids).size).toBe(ids.length);
      });

      it('points every panel, target and query variable at the $datasource variable', () => {
        const viaVariable = { type: 'prometheus', uid: '${datasource}' };
        for (const panel of panels) {
          expect(panel.datasource, panel.title).toEqual(viaVariable);
          for (const target of panel.targets ?? []) {
            expect(target.datasource, `${panel.title} ${target.refId}`).toEqual(viaVariable);
          }
        }
        for (const variable of dashboard.templating?.list ?? []) {
          if (variable.name !== 'datasource') expect(variable.datasource, variable.name).toEqual(viaVariable);
        }
      });

      it('gives every panel at least one target, each with a PromQL expression and a unique refId', () => {
        for (const panel of panels) {
          const targets = panel.targets ?? [];
          expect(targets.length, panel.title).toBeGreaterThan(0);
          expect(new Set(targets.map((t) => t.refId)).size).toBe(targets.length);
          for (const target of targets) {
            expect(typeof target.expr === 'string' && target.expr.trim().length > 0, panel.title).toBe(true);
            // Only toolgate's metrics and the series recorded from them.
            expect(target.expr, panel.title).toMatch(/toolgate_/);
          }
        }
      });

      it('defines every template variable its queries use', () => {
        const defined = new Set((dashboard.templating?.list ?? []).map((v) => v.name));
        const used = new Set(
          panels
            .flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ''))
            .flatMap((expr) => [...expr.matchAll(/\$(\w+)/g)].map((m) => m[1]!))
            .filter((name) => !name.startsWith('__')),
        );
        for (const name of used) expect(defined.has(name), `$${name}`).toBe(true);
      });
    });
  }
});

import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * The dashboards must import into any Grafana unchanged: no panel, target or variable may name a
 * datasource uid; they all go through the `$datasource` variable, whose initial value is the
 * import input DS_PROMETHEUS. Read from the generated JSON files, as Grafana reads them.
 */

const VIA_VARIABLE = { type: 'prometheus', uid: '${datasource}' };
const dir = new URL('../../../deploy/grafana/dashboards/', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

interface Variable {
  name: string;
  type: string;
  query?: unknown;
  current?: { value?: unknown; text?: unknown };
  datasource?: unknown;
}
interface Input {
  name: string;
  type: string;
  pluginId: string;
}

const provisioned = parse(
  readFileSync(
    new URL('../../../deploy/grafana/provisioning/datasources/prometheus.yml', import.meta.url),
    'utf8',
  ),
) as { datasources: { uid: string; type: string; isDefault?: boolean }[] };

/** Every `datasource` value anywhere in `node`, with the JSON path it sits at. */
function datasourceRefs(node: unknown, path = '$'): Array<{ path: string; value: unknown }> {
  if (Array.isArray(node)) return node.flatMap((item, i) => datasourceRefs(item, `${path}[${i}]`));
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) => [
    ...(key === 'datasource' ? [{ path: `${path}.${key}`, value }] : []),
    ...datasourceRefs(value, `${path}.${key}`),
  ]);
}

/** The datasource references that do not go through the variable. */
function hardCoded(dashboard: unknown): string[] {
  return datasourceRefs(dashboard)
    .filter((ref) => JSON.stringify(ref.value) !== JSON.stringify(VIA_VARIABLE))
    .map((ref) => `${ref.path} = ${JSON.stringify(ref.value)}`);
}

describe('the check itself', () => {
  it('flags a panel or target that names a datasource uid, or a datasource by name', () => {
    const panel = (ds: unknown, targetDs: unknown) => ({
      panels: [{ datasource: ds, targets: [{ refId: 'A', datasource: targetDs }] }],
    });
    expect(hardCoded(panel(VIA_VARIABLE, VIA_VARIABLE))).toEqual([]);
    expect(hardCoded(panel({ type: 'prometheus', uid: 'toolgate-prometheus' }, VIA_VARIABLE))).toHaveLength(
      1,
    );
    expect(hardCoded(panel(VIA_VARIABLE, { type: 'prometheus', uid: 'abc' }))).toEqual([
      '$.panels[0].targets[0].datasource = {"type":"prometheus","uid":"abc"}',
    ]);
    expect(hardCoded(panel('Prometheus', VIA_VARIABLE))).toHaveLength(1);
  });
});

describe('Grafana dashboards name no datasource uid', () => {
  it('there are dashboards to check', () => {
    expect(files.length).toBeGreaterThanOrEqual(5);
  });

  for (const file of files) {
    describe(file, () => {
      const text = readFileSync(new URL(file, dir), 'utf8');
      const dashboard = JSON.parse(text) as {
        __inputs?: Input[];
        templating?: { list?: Variable[] };
        panels?: Array<{ targets?: unknown[] }>;
      };
      const variables = dashboard.templating?.list ?? [];

      it('every panel, target and query variable uses ${datasource}', () => {
        expect(hardCoded(dashboard)).toEqual([]);
        const panels = dashboard.panels ?? [];
        expect(panels.length).toBeGreaterThan(0);
        // Each panel and each of its targets carries one reference, so none can be missing.
        const expected = panels.reduce((n, p) => n + 1 + (p.targets?.length ?? 0), 0);
        const queryVariables = variables.filter((v) => v.type === 'query').length;
        expect(datasourceRefs(dashboard)).toHaveLength(expected + queryVariables);
        for (const { uid } of provisioned.datasources) expect(text).not.toContain(uid);
      });

      it('defines $datasource first: a datasource variable over Prometheus datasources', () => {
        expect(variables[0]).toMatchObject({ name: 'datasource', type: 'datasource', query: 'prometheus' });
        expect(variables[0]).not.toHaveProperty('datasource');
        expect(variables.filter((v) => v.name === 'datasource')).toHaveLength(1);
      });

      it('declares DS_PROMETHEUS in __inputs, and the import choice becomes the variable value', () => {
        expect(dashboard.__inputs).toEqual([
          expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' }),
        ]);
        // Every ${DS_…} placeholder is a declared input (the import replaces only those).
        const placeholders = new Set([...text.matchAll(/\$\{(DS_\w+)\}/g)].map((m) => m[1]));
        expect([...placeholders]).toEqual(['DS_PROMETHEUS']);
        // What the import does: textual replacement of the placeholder by the chosen uid.
        const imported = JSON.parse(text.replaceAll('${DS_PROMETHEUS}', 'chosen-uid')) as typeof dashboard;
        expect(imported.templating?.list?.[0]?.current).toMatchObject({ value: 'chosen-uid' });
        expect(hardCoded(imported)).toEqual([]);
      });
    });
  }

  it('provisioning makes its Prometheus datasource the default, which the variable falls back to', () => {
    const prometheus = provisioned.datasources.filter((d) => d.type === 'prometheus');
    expect(prometheus).toHaveLength(1);
    expect(prometheus[0]?.isDefault).toBe(true);
  });
});

/**
 * The small part of Grafana's dashboard JSON model the toolgate dashboards use (schemaVersion 39,
 * Grafana 10/11): time-series, stat and bar-gauge panels over a Prometheus datasource, laid out two
 * per row.
 *
 * No dashboard names a datasource uid. Every panel, target and query variable uses the
 * `$datasource` template variable (type datasource, plugin prometheus), so a dashboard works in any
 * Grafana: provisioned (provisioning/datasources gives the local one a uid and makes it the
 * default), imported through the UI or `POST /api/dashboards/import`, or copied as JSON.
 * The variable's initial value is the import input `DS_PROMETHEUS` (`__inputs`): the import
 * replaces `${DS_PROMETHEUS}` with the datasource chosen; where nothing replaces it (file
 * provisioning), the placeholder matches no datasource and Grafana selects the default Prometheus
 * datasource instead.
 */

/** The name of the datasource template variable every panel and target refers to. */
export const DATASOURCE_VARIABLE = 'datasource';

/** The import input (`__inputs`) whose chosen datasource becomes the variable's initial value. */
export const DATASOURCE_INPUT = 'DS_PROMETHEUS';

/** What every panel, target and query variable names as its datasource. */
export const PANEL_DATASOURCE = { type: 'prometheus', uid: `\${${DATASOURCE_VARIABLE}}` } as const;

const datasource = PANEL_DATASOURCE;

/** The panel plugins a rendered dashboard can use, for `__requires`. */
const PANEL_PLUGINS = {
  timeseries: 'Time series',
  stat: 'Stat',
  bargauge: 'Bar gauge',
} as const;

/** One query of a panel: the PromQL and how each returned series is named in the legend. */
export interface QuerySpec {
  readonly expr: string;
  readonly legend?: string;
}

/** What a dashboard author writes per panel; ids, datasource and layout are filled in. */
export interface PanelSpec {
  readonly title: string;
  readonly description: string;
  readonly type?: 'timeseries' | 'stat' | 'bargauge';
  /** Grafana unit id: "reqps", "s", "short", "percentunit", … */
  readonly unit: string;
  readonly queries: readonly QuerySpec[];
  /** Full width instead of half. */
  readonly wide?: boolean;
  /** Colour steps for stat panels: [value, colour] from the lowest. */
  readonly thresholds?: readonly (readonly [number | null, string])[];
  /** Stacked areas (outcome mixes). */
  readonly stacked?: boolean;
}

/** A template variable filled from a label's values. */
export interface VariableSpec {
  readonly name: string;
  readonly label: string;
  /** PromQL series selector whose label `label` values fill the drop-down. */
  readonly metric: string;
  readonly labelName: string;
}

/** A dashboard before it is rendered. */
export interface DashboardSpec {
  readonly uid: string;
  readonly title: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly variables?: readonly VariableSpec[];
  readonly panels: readonly PanelSpec[];
}

/**
 * Renders a dashboard: panel ids 1..n in order, half-width panels two per row (8 units high),
 * wide ones alone, refresh 30 s over the last hour. Pure: the same spec gives the same JSON.
 */
export function renderDashboard(spec: DashboardSpec): Record<string, unknown> {
  let x = 0;
  let y = 0;
  const panels = spec.panels.map((p, i) => {
    const w = p.wide === true ? 24 : 12;
    if (x + w > 24) {
      x = 0;
      y += 8;
    }
    const gridPos = { x, y, w, h: 8 };
    x += w;
    if (x >= 24) {
      x = 0;
      y += 8;
    }
    return renderPanel(p, i + 1, gridPos);
  });
  const panelTypes = [...new Set(spec.panels.map((p) => p.type ?? 'timeseries'))].sort();
  return {
    __inputs: [
      {
        name: DATASOURCE_INPUT,
        label: 'Prometheus',
        description: 'The Prometheus datasource that scrapes the toolgate services',
        type: 'datasource',
        pluginId: 'prometheus',
        pluginName: 'Prometheus',
      },
    ],
    __requires: [
      { type: 'grafana', id: 'grafana', name: 'Grafana', version: '10.0.0' },
      { type: 'datasource', id: 'prometheus', name: 'Prometheus', version: '1.0.0' },
      ...panelTypes.map((id) => ({ type: 'panel', id, name: PANEL_PLUGINS[id], version: '' })),
    ],
    uid: spec.uid,
    title: spec.title,
    description: spec.description,
    tags: [...spec.tags],
    editable: true,
    graphTooltip: 1,
    schemaVersion: 39,
    version: 1,
    refresh: '30s',
    time: { from: 'now-1h', to: 'now' },
    timezone: 'utc',
    templating: { list: [datasourceVariable(), ...(spec.variables ?? []).map(renderVariable)] },
    annotations: { list: [] },
    links: [],
    panels,
  };
}

function renderPanel(p: PanelSpec, id: number, gridPos: Record<string, number>): Record<string, unknown> {
  const type = p.type ?? 'timeseries';
  const custom =
    type === 'timeseries'
      ? {
          drawStyle: 'line',
          lineWidth: 1,
          fillOpacity: p.stacked === true ? 60 : 10,
          showPoints: 'never',
          stacking: { mode: p.stacked === true ? 'normal' : 'none', group: 'A' },
        }
      : {};
  const steps = (p.thresholds ?? [[null, 'green']]).map(([value, color]) => ({ value, color }));
  return {
    id,
    type,
    title: p.title,
    description: p.description,
    datasource,
    gridPos,
    fieldConfig: {
      defaults: { unit: p.unit, custom, thresholds: { mode: 'absolute', steps } },
      overrides: [],
    },
    options:
      type === 'timeseries'
        ? { legend: { displayMode: 'table', placement: 'bottom', calcs: ['lastNotNull', 'max'] } }
        : { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false } },
    targets: p.queries.map((q, i) => ({
      refId: String.fromCharCode(65 + i),
      datasource,
      expr: q.expr,
      legendFormat: q.legend ?? '__auto',
      range: true,
    })),
  };
}

function renderVariable(v: VariableSpec): Record<string, unknown> {
  const query = `label_values(${v.metric}, ${v.labelName})`;
  return {
    name: v.name,
    label: v.label,
    type: 'query',
    datasource,
    query: { query, refId: `${v.name}-values` },
    definition: query,
    refresh: 2,
    sort: 1,
    includeAll: false,
    multi: false,
    current: {},
    options: [],
  };
}

/** The `$datasource` drop-down: every Prometheus datasource of the Grafana it runs in. */
function datasourceVariable(): Record<string, unknown> {
  const placeholder = `\${${DATASOURCE_INPUT}}`;
  return {
    name: DATASOURCE_VARIABLE,
    label: 'Data source',
    type: 'datasource',
    query: 'prometheus',
    regex: '',
    refresh: 1,
    hide: 0,
    includeAll: false,
    multi: false,
    current: { selected: false, text: placeholder, value: placeholder },
    options: [],
  };
}

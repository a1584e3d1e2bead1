/**
 * Writes deploy/grafana/dashboards/<uid>.json from deploy/grafana/dashboards.ts (run after editing
 * a spec: `npx tsx deploy/grafana/build-dashboards.ts`). Files of dashboards no longer in the list
 * are left alone; delete them by hand.
 */
import { writeFileSync } from 'node:fs';
import { renderDashboard } from './dashboard-model.js';
import { DASHBOARDS } from './dashboards.js';

/** The file text of a rendered dashboard: two-space JSON and a final newline (prettier's output). */
export function dashboardFileText(rendered: Record<string, unknown>): string {
  return `${JSON.stringify(rendered, null, 2)}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const spec of DASHBOARDS) {
    const file = new URL(`dashboards/${spec.uid}.json`, import.meta.url);
    writeFileSync(file, dashboardFileText(renderDashboard(spec)));
    process.stdout.write(`wrote ${file.pathname}\n`);
  }
}

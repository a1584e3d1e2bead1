/** One sample of an instant query: its labels and value ("NaN" and "+Inf" are strings too). */
export interface PromSample {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

/** An alert as GET /api/v1/alerts lists it. */
export interface PromAlert {
  readonly labels: Record<string, string>;
  readonly state: 'pending' | 'firing';
  readonly value: string;
}

async function get<T>(baseUrl: string, path: string): Promise<T> {
  const res = await fetch(`${baseUrl}${path}`, { signal: AbortSignal.timeout(10_000) });
  const body = (await res.json()) as { status: string; data?: T; error?: string };
  if (body.status !== 'success' || body.data === undefined) {
    throw new Error(`Prometheus ${path}: ${res.status} ${body.error ?? JSON.stringify(body)}`);
  }
  return body.data;
}

/** Runs an instant query (GET /api/v1/query); rejects on a PromQL error. Scalars come back as one sample. */
export async function instantQuery(baseUrl: string, expr: string): Promise<PromSample[]> {
  const data = await get<{ resultType: string; result: unknown }>(
    baseUrl,
    `/api/v1/query?query=${encodeURIComponent(expr)}`,
  );
  if (data.resultType === 'vector') return data.result as PromSample[];
  if (data.resultType === 'scalar') return [{ metric: {}, value: data.result as [number, string] }];
  throw new Error(`unexpected result type ${data.resultType} for ${expr}`);
}

/** The alerts Prometheus holds right now, pending and firing. */
export async function activeAlerts(baseUrl: string): Promise<PromAlert[]> {
  return (await get<{ alerts: PromAlert[] }>(baseUrl, '/api/v1/alerts')).alerts;
}

/** Scrape targets and their health, by job. */
export async function targetHealth(baseUrl: string): Promise<{ job: string; url: string; health: string }[]> {
  const data = await get<{
    activeTargets: { labels: { job: string }; scrapeUrl: string; health: string; lastError: string }[];
  }>(baseUrl, '/api/v1/targets?state=active');
  return data.activeTargets.map((t) => ({ job: t.labels.job, url: t.scrapeUrl, health: t.health }));
}

/** True when at least one sample has a finite value (a quantile over no traffic is NaN). */
export function hasFiniteValue(samples: readonly PromSample[]): boolean {
  return samples.some((s) => Number.isFinite(Number(s.value[1])));
}

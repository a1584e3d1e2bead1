import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/** One hand-labelled request: what a user says and the call a careful assistant makes first. */
export const labelledRequestSchema = z.strictObject({
  id: z.string().min(1),
  request: z.string().min(1),
  expected: z.strictObject({
    tool: z.string().min(1),
    /** Only the arguments the request determines; anything else the model adds counts as extra. */
    args: z.record(z.string(), z.unknown()),
  }),
});

export const requestSetSchema = z.strictObject({
  note: z.string().optional(),
  requests: z.array(labelledRequestSchema).min(1),
});

/** What a model answered to one request: one tool call, or text without a call (`tool: null`). */
export const recordedAnswerSchema = z.union([
  z.strictObject({ id: z.string().min(1), tool: z.string().min(1), args: z.record(z.string(), z.unknown()) }),
  z.strictObject({ id: z.string().min(1), tool: z.null(), text: z.string() }),
]);

/** A model's answers to the request set under one schema variant. */
export const recordingSchema = z.strictObject({
  variant: z.string().min(1),
  /** What the variant's schemas contain. */
  schemas: z.string().min(1),
  /** Where the answers come from (a model and date, or that they are hand-written stand-ins). */
  source: z.string().min(1),
  answers: z.array(recordedAnswerSchema),
});

export type LabelledRequest = z.infer<typeof labelledRequestSchema>;
export type RecordedAnswer = z.infer<typeof recordedAnswerSchema>;
export type Recording = z.infer<typeof recordingSchema>;

async function readJson<T>(path: string, schema: z.ZodType<T>): Promise<T> {
  const parsed = schema.safeParse(JSON.parse(await readFile(path, 'utf8')));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new Error(`${path}:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}

/** Reads the labelled request set; rejects on invalid JSON, a schema problem or a repeated id. */
export async function loadRequests(path: string): Promise<LabelledRequest[]> {
  const { requests } = await readJson(path, requestSetSchema);
  const ids = new Set<string>();
  for (const r of requests) {
    if (ids.has(r.id)) throw new Error(`${path}: request id ${r.id} appears twice`);
    ids.add(r.id);
  }
  return requests;
}

/** Reads every `*.json` recording in a directory, ordered by file name. */
export async function loadRecordings(dir: string): Promise<Recording[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(files.map((f) => readJson(join(dir, f), recordingSchema)));
}

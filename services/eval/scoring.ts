import { isDeepStrictEqual } from 'node:util';
import type { LabelledRequest, RecordedAnswer, Recording } from './eval-data.js';

/** How one expected argument fared. */
export type FieldStatus = 'match' | 'mismatch' | 'missing';

export interface FieldScore {
  readonly field: string;
  readonly status: FieldStatus;
  readonly expected: unknown;
  readonly actual?: unknown;
}

/** The score of one answer against its label. */
export interface AnswerScore {
  readonly id: string;
  readonly toolCorrect: boolean;
  /** The tool the answer called; null when it answered in text or gave no answer. */
  readonly answeredTool: string | null;
  /** One per expected argument. With the wrong tool (or none) every one is 'missing'. */
  readonly fields: readonly FieldScore[];
  /** Argument names the answer sent that the label does not expect (only scored with the right tool). */
  readonly extraFields: readonly string[];
  /** Right tool, every expected field matched, nothing extra. */
  readonly exact: boolean;
}

export interface ScoringOptions {
  /** Largest absolute difference at which two numbers still match (default 0.005: half a cent). */
  readonly numericTolerance?: number;
}

/**
 * Whether an answered value matches the expected one: numbers within the tolerance (a number and
 * a numeric string do not match: the schema would refuse the string), strings exactly (the tools
 * take ids and enum values verbatim), arrays element-wise, objects key-wise, both recursively.
 */
export function valuesMatch(expected: unknown, actual: unknown, tolerance = 0.005): boolean {
  if (typeof expected === 'number' && typeof actual === 'number') {
    return Math.abs(expected - actual) <= tolerance;
  }
  if (Array.isArray(expected) && Array.isArray(actual)) {
    return (
      expected.length === actual.length && expected.every((e, i) => valuesMatch(e, actual[i], tolerance))
    );
  }
  if (isRecord(expected) && isRecord(actual)) {
    const keys = Object.keys(expected);
    return (
      keys.length === Object.keys(actual).length &&
      keys.every((k) => k in actual && valuesMatch(expected[k], actual[k], tolerance))
    );
  }
  return isDeepStrictEqual(expected, actual);
}

/** Scores one answer (or its absence) against its label. Pure. */
export function scoreAnswer(
  request: LabelledRequest,
  answer: RecordedAnswer | undefined,
  options: ScoringOptions = {},
): AnswerScore {
  const tolerance = options.numericTolerance ?? 0.005;
  const expected = request.expected.args;
  const toolCorrect = answer?.tool === request.expected.tool;
  const args = toolCorrect && answer !== undefined && 'args' in answer ? answer.args : undefined;
  const fields = Object.entries(expected).map(([field, value]): FieldScore => {
    if (args === undefined || !(field in args) || args[field] === undefined) {
      return { field, status: 'missing', expected: value };
    }
    const actual = args[field];
    return {
      field,
      status: valuesMatch(value, actual, tolerance) ? 'match' : 'mismatch',
      expected: value,
      actual,
    };
  });
  const extraFields =
    args === undefined ? [] : Object.keys(args).filter((k) => !(k in expected) && args[k] !== undefined);
  return {
    id: request.id,
    toolCorrect,
    answeredTool: answer?.tool ?? null,
    fields,
    extraFields,
    exact: toolCorrect && extraFields.length === 0 && fields.every((f) => f.status === 'match'),
  };
}

/** One variant's totals. Accuracies are fractions in [0, 1] (0 when the denominator is 0). */
export interface VariantScore {
  readonly variant: string;
  readonly requests: number;
  readonly toolCorrect: number;
  readonly toolAccuracy: number;
  /** Expected fields over all requests, and those matched (a wrong tool matches none). */
  readonly fieldsExpected: number;
  readonly fieldsMatched: number;
  readonly fieldAccuracy: number;
  /** Field accuracy over the requests where the tool was right: argument quality on its own. */
  readonly fieldAccuracyWhenToolCorrect: number;
  readonly extraFields: number;
  readonly exactCalls: number;
  /** Requests the recording has no answer for (scored as no call). */
  readonly unanswered: readonly string[];
  readonly answers: readonly AnswerScore[];
}

/**
 * Scores a recording against the request set. Every request counts; a request without an answer
 * is scored as "no tool called" and listed in `unanswered`. Throws when the recording answers an id
 * the set does not have, or answers one twice (a mislabelled recording must not score silently).
 */
export function scoreVariant(
  requests: readonly LabelledRequest[],
  recording: Recording,
  options: ScoringOptions = {},
): VariantScore {
  const byId = new Map<string, RecordedAnswer>();
  const known = new Set(requests.map((r) => r.id));
  for (const answer of recording.answers) {
    if (!known.has(answer.id))
      throw new Error(`${recording.variant}: answer for unknown request ${answer.id}`);
    if (byId.has(answer.id)) throw new Error(`${recording.variant}: request ${answer.id} answered twice`);
    byId.set(answer.id, answer);
  }
  const answers = requests.map((r) => scoreAnswer(r, byId.get(r.id), options));
  const matched = (list: readonly AnswerScore[]) =>
    list.reduce((n, a) => n + a.fields.filter((f) => f.status === 'match').length, 0);
  const expected = (list: readonly AnswerScore[]) => list.reduce((n, a) => n + a.fields.length, 0);
  const right = answers.filter((a) => a.toolCorrect);
  return {
    variant: recording.variant,
    requests: requests.length,
    toolCorrect: right.length,
    toolAccuracy: ratio(right.length, requests.length),
    fieldsExpected: expected(answers),
    fieldsMatched: matched(answers),
    fieldAccuracy: ratio(matched(answers), expected(answers)),
    fieldAccuracyWhenToolCorrect: ratio(matched(right), expected(right)),
    extraFields: answers.reduce((n, a) => n + a.extraFields.length, 0),
    exactCalls: answers.filter((a) => a.exact).length,
    unanswered: requests.filter((r) => !byId.has(r.id)).map((r) => r.id),
    answers,
  };
}

function ratio(n: number, d: number): number {
  return d === 0 ? 0 : n / d;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

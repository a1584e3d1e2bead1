import { describe, expect, it } from 'vitest';
import type { LabelledRequest, Recording } from '../../../services/eval/eval-data.js';
import { scoreAnswer, scoreVariant, valuesMatch } from '../../../services/eval/scoring.js';

const refund: LabelledRequest = {
  id: 'r1',
  request: 'Refund $49.99 on O-5512, it arrived broken.',
  expected: { tool: 'issue_refund', args: { order_id: 'O-5512', amount: 49.99, reason: 'damaged' } },
};
const weather: LabelledRequest = {
  id: 'r2',
  request: 'Weather in Boston?',
  expected: { tool: 'get_weather', args: { city: 'Boston' } },
};

describe('valuesMatch', () => {
  it('matches numbers within half a cent by default, and no further', () => {
    expect(valuesMatch(49.99, 49.99000001)).toBe(true);
    expect(valuesMatch(49.99, 49.994)).toBe(true);
    expect(valuesMatch(49.99, 49.996)).toBe(false);
    expect(valuesMatch(10, 10.5, 1)).toBe(true);
  });

  it('does not take a numeric string for a number', () => {
    expect(valuesMatch(7.25, '7.25')).toBe(false);
  });

  it('compares strings exactly and structures recursively', () => {
    expect(valuesMatch('Boston', 'boston')).toBe(false);
    expect(valuesMatch([{ a: 1 }], [{ a: 1.001 }])).toBe(true);
    expect(valuesMatch({ a: 1 }, { a: 1, b: 2 })).toBe(false);
  });
});

describe('scoreAnswer', () => {
  it('an exact call', () => {
    const s = scoreAnswer(refund, { id: 'r1', tool: 'issue_refund', args: { ...refund.expected.args } });
    expect(s).toMatchObject({ toolCorrect: true, exact: true, extraFields: [] });
    expect(s.fields.map((f) => f.status)).toEqual(['match', 'match', 'match']);
  });

  it('per field: mismatch, missing, and an extra field spoils exactness but not the fields', () => {
    const s = scoreAnswer(refund, {
      id: 'r1',
      tool: 'issue_refund',
      args: { order_id: 'O-5512', reason: 'broken', note: 'customer angry' },
    });
    expect(s.fields).toEqual([
      { field: 'order_id', status: 'match', expected: 'O-5512', actual: 'O-5512' },
      { field: 'amount', status: 'missing', expected: 49.99 },
      { field: 'reason', status: 'mismatch', expected: 'damaged', actual: 'broken' },
    ]);
    expect(s.extraFields).toEqual(['note']);
    expect(s.exact).toBe(false);
  });

  it('the wrong tool matches no field, whatever its arguments say', () => {
    const s = scoreAnswer(weather, { id: 'r2', tool: 'lookup_order', args: { city: 'Boston' } });
    expect(s.toolCorrect).toBe(false);
    expect(s.answeredTool).toBe('lookup_order');
    expect(s.fields.map((f) => f.status)).toEqual(['missing']);
    expect(s.extraFields).toEqual([]);
  });

  it('text instead of a call, and no answer at all, are both "no tool"', () => {
    expect(scoreAnswer(weather, { id: 'r2', tool: null, text: 'It is sunny.' })).toMatchObject({
      toolCorrect: false,
      answeredTool: null,
    });
    expect(scoreAnswer(weather, undefined)).toMatchObject({ toolCorrect: false, answeredTool: null });
  });
});

describe('scoreVariant', () => {
  const recording = (answers: Recording['answers']): Recording => ({
    variant: 'v',
    schemas: 'test',
    source: 'hand-written',
    answers,
  });

  it('counts tool selection and field accuracy over all requests, and over the right-tool ones', () => {
    const s = scoreVariant(
      [refund, weather],
      recording([
        { id: 'r1', tool: 'issue_refund', args: { order_id: 'O-5512', amount: 49.99, reason: 'other' } },
        { id: 'r2', tool: 'lookup_order', args: { order_id: 'O-1' } },
      ]),
    );
    expect(s).toMatchObject({
      requests: 2,
      toolCorrect: 1,
      toolAccuracy: 0.5,
      fieldsExpected: 4,
      fieldsMatched: 2,
      fieldAccuracy: 0.5,
      exactCalls: 0,
      unanswered: [],
    });
    expect(s.fieldAccuracyWhenToolCorrect).toBeCloseTo(2 / 3);
  });

  it('scores a missing answer as no call and lists it', () => {
    const s = scoreVariant(
      [refund, weather],
      recording([{ id: 'r2', tool: 'get_weather', args: { city: 'Boston' } }]),
    );
    expect(s.unanswered).toEqual(['r1']);
    expect(s.toolCorrect).toBe(1);
    expect(s.exactCalls).toBe(1);
  });

  it('refuses answers to unknown requests and repeated answers', () => {
    expect(() => scoreVariant([refund], recording([{ id: 'zz', tool: null, text: '' }]))).toThrow(
      'v: answer for unknown request zz',
    );
    const twice = recording([
      { id: 'r1', tool: null, text: '' },
      { id: 'r1', tool: null, text: '' },
    ]);
    expect(() => scoreVariant([refund], twice)).toThrow('v: request r1 answered twice');
  });
});

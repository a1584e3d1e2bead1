import { generateKeyPair } from 'jose';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPrincipalVerifier, signPrincipal } from '../../../libs/auth/index.js';
import type { PrincipalVerifier } from '../../../libs/auth/principal-verifier.js';
import { ToolgateError } from '../../../libs/core/errors.js';
import { argumentsFingerprint, idempotencyKey } from '../../../libs/core/idempotency-key.js';
import { STAGES } from '../../../libs/guards/stages.js';
import { GuardPipeline, INGRESS_STAGES, type RunOptions } from '../../../libs/pipeline/guard-pipeline.js';
import type { SignedIngress } from '../../../libs/pipeline/call-state.js';
import { call, context, countingRefundTool, harness, principal, TENANT, type Harness } from './fixtures.js';

const ISSUER = 'https://agents.example.test';
const AUDIENCE = 'toolgate-executor';
let sign: (p: ReturnType<typeof principal>) => Promise<string>;
let verifier: PrincipalVerifier;
let h: Harness | undefined;

beforeAll(async () => {
  const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  verifier = createPrincipalVerifier({ keys: { k1: publicKey }, issuer: ISSUER, audience: AUDIENCE });
  sign = (p) =>
    signPrincipal(p, privateKey, { issuer: ISSUER, audience: AUDIENCE, ttlSeconds: 60, kid: 'k1' });
});

afterEach(() => h?.close());

/** A signed run of `issue_refund` through the full stage list; `ctx` is what the caller claims. */
async function signedRun(
  signed: Partial<SignedIngress> & { readonly principalAssertion: string },
  opts: { readonly withVerifier?: boolean; readonly key?: string; readonly steps?: typeof STAGES } = {},
) {
  const refund = countingRefundTool();
  h = harness([refund.tool]);
  const deps = opts.withVerifier === false ? h.deps : { ...h.deps, verifier };
  const pipeline = new GuardPipeline(deps, opts.steps ?? STAGES);
  const runOptions: RunOptions = {
    signed: { argumentsJson: JSON.stringify({ order_id: 'O-1', amount: 5 }), ...signed },
    ...(opts.key === undefined ? {} : { idempotencyKey: opts.key }),
  };
  // What the caller put in the call and context is ignored on a signed run: an admin principal and
  // arguments of its own choosing must not reach any stage.
  const claimed = context({
    principal: principal({ id: 'admin', scopes: ['refunds:write'], roles: ['manager'] }),
  });
  const run = await pipeline.run(call({ order_id: 'O-9', amount: 999 }), claimed, runOptions);
  return { run, refund, h: h };
}

const stagesOf = (run: { audit: { decisions: readonly { stage: string; decision: string }[] } }) =>
  run.audit.decisions.map((d) => `${d.stage}:${d.decision}`);

describe('ingress stages: a signed call is verified and parsed inside the pipeline', () => {
  it('a verified principal and parsed arguments replace whatever the caller claimed', async () => {
    const { run, refund } = await signedRun({ principalAssertion: await sign(principal()) });
    expect(run.result.outcome).toBe('SUCCESS');
    expect(refund.calls()).toBe(1);
    expect(run.result.payload).toEqual({ refund_id: 'R-1', amount: 5 });
    expect(run.audit.principalId).toBe('agent-7');
    expect(stagesOf(run).slice(0, 3)).toEqual([
      'verify-principal:pass',
      'parse-arguments:pass',
      'resolve:pass',
    ]);
    expect(run.principalRefusal).toBeUndefined();
  });

  it.each([
    ['a forged assertion', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', true],
    ['an empty assertion', '', true],
    ['any assertion when no verifier is configured', 'x.y.z', false],
  ])(
    '%s is refused INVALID_PRINCIPAL at verify-principal; nothing else runs',
    async (_, token, withVerifier) => {
      const { run, refund } = await signedRun({ principalAssertion: token }, { withVerifier });
      expect(run.result).toMatchObject({ outcome: 'UNAUTHORIZED', toolInvocations: 0 });
      expect(run.result.error).toMatchObject({ code: 'INVALID_PRINCIPAL', retryable: false });
      expect(run.result.error!.suggestedFix).toBeUndefined();
      expect(refund.calls()).toBe(0);
      expect(stagesOf(run)).toEqual(['verify-principal:refuse']);
      expect(run.audit.principalId).toBe('unverified');
      // Arguments are all redacted: no tool definition was consulted.
      expect(JSON.stringify(run.audit.arguments)).not.toContain('O-1');
      expect(run.principalRefusal?.reason).toBeDefined();
      // The verifier's reason is for the audit record only, never the model.
      expect(run.audit.decisions[0]!.reason).toBe(run.principalRefusal!.detail);
      expect(run.result.error!.message).not.toBe(run.principalRefusal!.detail);
    },
  );

  it('a principal of another tenant is refused UNAUTHORIZED, naming the verified id in the audit record', async () => {
    const foreign = await sign(principal({ id: 'agent-x', tenant: 'other-tenant' }));
    const { run, refund } = await signedRun({ principalAssertion: foreign });
    expect(run.result.error?.code).toBe('UNAUTHORIZED');
    expect(refund.calls()).toBe(0);
    expect(run.audit).toMatchObject({ principalId: 'agent-x', tenant: TENANT });
    expect(run.principalRefusal?.reason).toBe('tenant');
  });

  it.each([
    ['an array', '[1,2]'],
    ['text that is not JSON', '{"order_id":'],
    ['null', 'null'],
  ])('arguments that are %s are refused SCHEMA_INVALID at parse-arguments', async (_, json) => {
    const { run, refund } = await signedRun({
      principalAssertion: await sign(principal()),
      argumentsJson: json,
    });
    expect(run.result.error).toMatchObject({ code: 'SCHEMA_INVALID', retryable: true });
    expect(stagesOf(run)).toEqual(['verify-principal:pass', 'parse-arguments:refuse']);
    expect(refund.calls()).toBe(0);
  });

  it("the transport's refusal of arguments it never read is the parse-arguments decision", async () => {
    const tooLarge = new ToolgateError('SCHEMA_INVALID', 'The request was 2000000 bytes, above the limit.', {
      retryable: false,
    });
    const { run, refund } = await signedRun({
      principalAssertion: await sign(principal()),
      argumentsRefusal: tooLarge,
    });
    expect(run.result.error?.message).toBe(tooLarge.message);
    expect(stagesOf(run)).toEqual(['verify-principal:pass', 'parse-arguments:refuse']);
    expect(refund.calls()).toBe(0);
  });

  it('an unverifiable call whose key already holds a claim of this call finishes UNRESOLVED, never "not run"', async () => {
    const args = { order_id: 'O-1', amount: 5 };
    const coords = { tenant: TENANT, taskId: 'task-1', step: 0, index: 0 };
    const key = idempotencyKey(coords, 'issue_refund', args);
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    await h.deps.idempotency.claim(key, argumentsFingerprint(args), 'executor-1', 60_000);
    const pipeline = new GuardPipeline({ ...h.deps, verifier }, STAGES);
    const run = await pipeline.run(call(args), context(), {
      idempotencyKey: key,
      signed: { principalAssertion: 'expired.or.forged', argumentsJson: JSON.stringify(args) },
    });
    expect(run.result).toMatchObject({ outcome: 'UNRESOLVED', toolInvocations: 0 });
    expect(stagesOf(run)).toEqual(['verify-principal:short-circuit']);
    expect(refund.calls()).toBe(0);
  });

  it('a call the caller vouches for (not signed) starts after the ingress stages', async () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    const run = await new GuardPipeline(h.deps, STAGES).run(call({ order_id: 'O-1', amount: 5 }), context());
    expect(run.result.outcome).toBe('SUCCESS');
    expect(run.audit.decisions[0]!.stage).toBe('resolve');
  });

  it('a signed call reaching a pipeline without ingress stages is refused INTERNAL, never run', async () => {
    const withoutIngress = STAGES.filter((s) => !INGRESS_STAGES.includes(s.name));
    const { run, refund } = await signedRun(
      { principalAssertion: await sign(principal()) },
      { steps: withoutIngress },
    );
    expect(run.result.error?.code).toBe('INTERNAL');
    expect(run.audit.decisions).toEqual([]);
    expect(refund.calls()).toBe(0);
  });

  it('an ingress stage anywhere but at the head of the list is refused at construction', () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    const [verify, parse, ...rest] = STAGES;
    expect(() => new GuardPipeline(h!.deps, [...rest, verify!, parse!])).toThrow(/must lead the pipeline/);
    expect(() => new GuardPipeline(h!.deps, [parse!, verify!, ...rest])).toThrow(/must lead the pipeline/);
    expect(() => new GuardPipeline(h!.deps, [verify!, ...rest])).toThrow(/must lead the pipeline/);
  });
});

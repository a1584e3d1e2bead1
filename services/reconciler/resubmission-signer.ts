import { createPrivateKey } from 'node:crypto';
import { signPrincipal } from '../../libs/auth/sign-principal.js';
import type { Clock } from '../../libs/core/clock.js';
import type { Principal } from '../../libs/core/types.js';
import type { CaseRequest } from '../../libs/reconcile/case-request.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';

/** How the reconciler signs its automatic re-submissions (RECONCILER_SIGNING_KEY_FILE and friends). */
export interface ResubmissionSigning {
  /** PEM private key, Ed25519 or P-256; the executors' PRINCIPAL_JWKS lists its public half. */
  readonly keyPem: string;
  readonly kid: string | undefined;
  /** The executors' PRINCIPAL_ISSUER and PRINCIPAL_AUDIENCE. */
  readonly issuer: string;
  readonly audience: string;
}

/** Lifetime of one assertion: it is verified when the executor takes the re-submission, at once. */
const TTL_SECONDS = 120;

/**
 * The principal an automatic re-submission runs as: this reconciler (a service), in the call's
 * tenant, acting for the call's original principal, with exactly the scopes the tool requires (the
 * original call held them, or it would not have run) and no roles. The same identity the
 * reconciler's status checks run with, plus those scopes. Pure.
 */
export function resubmissionPrincipal(
  request: Pick<CaseRequest, 'tenant' | 'principalId'>,
  tool: Pick<ToolDefinition, 'scopes'>,
  reconcilerId: string,
): Principal {
  return {
    id: reconcilerId,
    tenant: request.tenant,
    kind: 'service',
    scopes: [...tool.scopes],
    roles: [],
    ...(request.principalId === null ? {} : { onBehalfOf: request.principalId }),
  };
}

/**
 * Signs {@link resubmissionPrincipal} assertions with the configured key, as of `clock`: the
 * `resubmissionAssertion` of the reconciler (ReconcilerDeps).
 */
export function resubmissionSigner(
  signing: ResubmissionSigning,
  reconcilerId: string,
  clock: Clock,
): (request: CaseRequest, tool: ToolDefinition) => Promise<string> {
  const key = createPrivateKey(signing.keyPem);
  return (request, tool) =>
    signPrincipal(resubmissionPrincipal(request, tool, reconcilerId), key, {
      issuer: signing.issuer,
      audience: signing.audience,
      ttlSeconds: TTL_SECONDS,
      ...(signing.kid === undefined ? {} : { kid: signing.kid }),
      now: () => clock.now(),
    });
}

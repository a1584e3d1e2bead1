export { signPrincipal } from './sign-principal.js';
export type { PrincipalSigningKey, SignPrincipalOptions } from './sign-principal.js';
export { createPrincipalVerifier } from './principal-verifier.js';
export type {
  PrincipalVerificationKey,
  PrincipalVerifier,
  PrincipalVerifierOptions,
  PrincipalVerifyOptions,
} from './principal-verifier.js';
export { PRINCIPAL_ALGORITHMS, PRINCIPAL_TOKEN_TYPE, principalClaimsSchema } from './principal-claims.js';
export type { PrincipalAlgorithm, PrincipalClaims } from './principal-claims.js';
export { DEFAULT_PRINCIPAL_AUDIENCE, DEFAULT_PRINCIPAL_ISSUER } from './principal-defaults.js';
export {
  PRINCIPAL_REFUSAL_REASONS,
  PrincipalRefusedError,
  principalRefusalReason,
  refusalReasonOf,
} from './principal-refusal.js';
export type { PrincipalRefusalReason } from './principal-refusal.js';
export {
  generatePrincipalKeys,
  isPrincipalKeyId,
  PRINCIPAL_KEY_ALGORITHM,
  publicJwkOf,
} from './principal-keys.js';
export type { PrincipalKeyPair } from './principal-keys.js';

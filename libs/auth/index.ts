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

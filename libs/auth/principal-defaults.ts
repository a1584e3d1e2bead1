/**
 * The issuer an agent backend signs principal assertions as, unless told otherwise. The SDK's
 * `signing.issuer` and the executor's `PRINCIPAL_ISSUER` both default to it, so a client and an
 * executor configured with nothing agree; a verifier refuses any other issuer (reason `issuer`).
 */
export const DEFAULT_PRINCIPAL_ISSUER = 'toolgate-agent-backend';

/**
 * The audience principal assertions are for: the executors. The default of the SDK's
 * `signing.audience` and of the executor's `PRINCIPAL_AUDIENCE`; a verifier refuses any other
 * audience (reason `audience`).
 */
export const DEFAULT_PRINCIPAL_AUDIENCE = 'toolgate-executor';

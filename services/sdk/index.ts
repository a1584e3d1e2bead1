/**
 * The agent SDK: what an agent backend imports to run a model's tool calls through toolgate.
 * Hand it a provider response and the verified context of the turn; get back one result per call
 * and the provider-shaped messages to append to the conversation. See ROUTING.md for how results
 * find their way back to the instance that asked.
 */
export { createToolgateClient } from './toolgate-client.js';
export type { ToolgateClient, TurnCall, TurnOutcome } from './toolgate-client.js';
export { replyGroupId } from './client-options.js';
export type { PrincipalSigning, ToolgateClientOptions, TurnContext, TurnOptions } from './client-options.js';
export type { ProviderMessages, ProviderTurn } from '../../libs/providers/provider-shapes.js';
export type { PublishedCall, ToolCallResolution } from './result-inbox.js';
export { STILL_EXECUTING_MESSAGE } from './call-results.js';
export { CALL_LIMITS } from '../../libs/events/size-limits.js';
export type { CallLimits } from '../../libs/events/size-limits.js';

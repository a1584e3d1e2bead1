/** Approval requests: the state machine and four-eyes rules every approval store applies. */
export {
  approvalTransition,
  asOf,
  canonicalActor,
  fourEyesRefusal,
  newApprovalRequest,
  stateAt,
  type ApprovalAction,
  type ApprovalStep,
} from './approval-rules.js';

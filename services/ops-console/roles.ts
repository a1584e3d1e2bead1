/**
 * The console's roles, read from the operator's verified token (its `roles` claim) only:
 * - `viewer`: reads every page;
 * - `operator`: also resolves and redrives cases;
 * - `approver`: also approves and rejects previews waiting for a person.
 * Operator and approver include viewing; neither includes the other, so the person who works the
 * dead-letter queue need not be the one who may release a purchase.
 */
export const CONSOLE_ROLES = ['viewer', 'operator', 'approver'] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

/** What a request asks to do; every route names one and the server checks it before anything else. */
export type ConsoleAction = 'view' | 'resolve' | 'redrive' | 'approve' | 'reject';

const NEEDS: Readonly<Record<ConsoleAction, readonly ConsoleRole[]>> = {
  view: ['viewer', 'operator', 'approver'],
  resolve: ['operator'],
  redrive: ['operator'],
  approve: ['approver'],
  reject: ['approver'],
};

/** The console roles among a principal's roles (others are ignored). */
export function consoleRoles(roles: readonly string[]): ConsoleRole[] {
  return CONSOLE_ROLES.filter((r) => roles.includes(r));
}

/** Whether holding `roles` allows `action`. */
export function mayDo(roles: readonly ConsoleRole[], action: ConsoleAction): boolean {
  return NEEDS[action].some((r) => roles.includes(r));
}

/** The roles that allow `action`, for the refusal message. */
export function rolesFor(action: ConsoleAction): readonly ConsoleRole[] {
  return NEEDS[action];
}

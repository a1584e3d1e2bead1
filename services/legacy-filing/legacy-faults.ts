import { ToolgateError } from '../../libs/core/errors.js';

/**
 * The legacy service's business fault codes translated into the error taxonomy, once, here:
 * the cryptic codes never leak into a tool, and the wording is ours, written for the model.
 * An unknown code is a generic refusal (still CALLER_ERROR: the service said no, nothing was filed).
 */
export function errorForLegacyFault(code: string): ToolgateError {
  switch (code) {
    case 'F101':
      return new ToolgateError('CALLER_ERROR', 'The filing service does not recognise that filer id.', {
        suggestedFix: "Use the filer's 9-digit registration number, digits only.",
      });
    case 'F102':
      return new ToolgateError('CALLER_ERROR', 'Filing for that period is not open yet.', {
        suggestedFix:
          'Only the current quarter and earlier quarters can be filed; check the period (e.g. 2025-Q3).',
      });
    case 'F103':
      return new ToolgateError('CALLER_ERROR', 'The filing service refused the amount.', {
        suggestedFix: 'Give a non-negative amount in dollars with at most 2 decimals.',
      });
    case 'F105':
      return new ToolgateError('CALLER_ERROR', "The filing service refused the filer's name.", {
        suggestedFix: "Give the filer's registered name, 1 to 120 characters.",
      });
    case 'F100':
    case 'F104':
      // Our own translation produced something the service cannot read: not the model's to fix.
      return new ToolgateError(
        'INTERNAL',
        'The filing request could not be translated for the filing service.',
        {
          retryable: false,
        },
      );
    default:
      return new ToolgateError('CALLER_ERROR', 'The filing service rejected the filing.', {
        retryable: false,
      });
  }
}

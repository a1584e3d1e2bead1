import { z } from 'zod';

/** The eval's settings from the environment, parsed once. Keys are only read for `--live`. */
export interface EvalConfig {
  readonly openaiApiKey?: string;
  readonly anthropicApiKey?: string;
  readonly openaiModel: string;
  readonly anthropicModel: string;
}

const schema = z.object({
  OPENAI_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  TOOLGATE_EVAL_OPENAI_MODEL: z.string().min(1).default('gpt-4o-mini'),
  TOOLGATE_EVAL_ANTHROPIC_MODEL: z.string().min(1).default('claude-haiku-4-5'),
});

/** Parses `env` (default `process.env`); empty strings count as unset. */
export function loadEvalConfig(env: NodeJS.ProcessEnv = process.env): EvalConfig {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.parse(cleaned);
  return {
    ...(parsed.OPENAI_API_KEY === undefined ? {} : { openaiApiKey: parsed.OPENAI_API_KEY }),
    ...(parsed.ANTHROPIC_API_KEY === undefined ? {} : { anthropicApiKey: parsed.ANTHROPIC_API_KEY }),
    openaiModel: parsed.TOOLGATE_EVAL_OPENAI_MODEL,
    anthropicModel: parsed.TOOLGATE_EVAL_ANTHROPIC_MODEL,
  };
}

import { readFileSync } from 'node:fs';
import type { Message } from '@anthropic-ai/sdk/resources/messages';
import type { ChatCompletion } from 'openai/resources/chat/completions';

const dir = new URL('../../fixtures/providers/', import.meta.url);

/** A fresh copy each call, so a test that mutates it cannot affect another. */
export function openAIParallelFixture(): ChatCompletion {
  return JSON.parse(readFileSync(new URL('openai-parallel-tool-calls.json', dir), 'utf8')) as ChatCompletion;
}

export function anthropicParallelFixture(): Message {
  return JSON.parse(readFileSync(new URL('anthropic-parallel-tool-use.json', dir), 'utf8')) as Message;
}

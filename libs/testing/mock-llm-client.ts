import type { ProviderMessages, ProviderTurn } from '../providers/provider-shapes.js';
import type { FixtureRound } from './fixture-schema.js';

/**
 * A model that answers from a script instead of sampling: each `nextTurn` returns the
 * next recorded provider response, tagged with its provider, exactly as the SDK's `runTurn` takes
 * it. The tool messages the agent feeds back are kept in `conversation`, so a test can check what
 * the model would have read. No network, no key, the same decision on every run.
 *
 * Contract: responses are served once each, in script order; asking past the end throws (a loop
 * that asks the model more often than the fixture foresaw is a finding, not something to paper
 * over). `turnsServed` counts the responses handed out.
 */
export class MockLLMClient {
  readonly #rounds: readonly Pick<FixtureRound, 'provider' | 'response'>[];
  readonly #conversation: ProviderMessages[] = [];
  #next = 0;

  constructor(rounds: readonly Pick<FixtureRound, 'provider' | 'response'>[]) {
    this.#rounds = rounds;
  }

  /** The next scripted assistant response. Throws when the script is exhausted. */
  nextTurn(): ProviderTurn {
    const round = this.#rounds[this.#next];
    if (round === undefined) {
      throw new Error(
        `the model script has ${this.#rounds.length} round(s); round ${this.#next + 1} was asked for`,
      );
    }
    this.#next += 1;
    // The fixture schema checks only that a response is an object; the SDK's normalizers check the
    // provider shape and answer malformed calls the way they would answer a real provider's.
    return { provider: round.provider, response: round.response } as unknown as ProviderTurn;
  }

  /** Records the tool messages the agent appended after a turn (what the model reads next). */
  receive(messages: ProviderMessages): void {
    this.#conversation.push(messages);
  }

  get turnsServed(): number {
    return this.#next;
  }

  get remaining(): number {
    return this.#rounds.length - this.#next;
  }

  /** The tool messages received so far, one entry per turn. */
  get conversation(): readonly ProviderMessages[] {
    return this.#conversation;
  }
}

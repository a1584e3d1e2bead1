/** `npm run demo -- --help`: what the demo does, its options, what each mode needs, examples. */
export function demoHelp(): string {
  return `toolgate demo — the refund story: six scripted agent turns (OpenAI and Anthropic tool-call
formats) through toolgate's guard pipeline, printing each proposed call, toolgate's decision and
the tool message the agent gets back.

Usage: npm run demo [-- <options>]

Options:
  --embedded            Run everything in this process: memory bus, memory stores, fake services.
                        Needs nothing else. The default.
  --kafka               Run the same story on real servers: Kafka topics with Avro through the
                        schema registry, Redis for idempotency and rate limits, Postgres for the
                        audit log, cases and the payment ledger. Each run gets its own id
                        (demo_<hex>): topics <id>.*, Postgres schema <id>, Redis keys <id>:*. They
                        are left for inspection; the run ends by printing the toolgate CLI
                        commands to look at them and the clean-up command.
  --clean-up <run-id>   Remove what that --kafka run created: its topics, consumer groups and
                        registry subjects, its Redis keys and its Postgres schema. Nothing of any
                        other run is touched. Repeating it is harmless.
  --verbose             Print toolgate's warnings and errors to stderr.
  -h, --help            This text.

Environment (--kafka and --clean-up; defaults are where the local servers listen):
  KAFKA_BROKERS         default 127.0.0.1:19092            (npm run servers:up)
  SCHEMA_REGISTRY_URL   default http://127.0.0.1:18081/apis/ccompat/v7   (npm run servers:up)
  REDIS_URL             default redis://127.0.0.1:6379
  DATABASE_URL          default postgres://postgres@127.0.0.1:5432/test
  TOOLGATE_DEMO_MODE    embedded or kafka; a flag wins over it

Examples:
  npm run demo
  npm run servers:up && npm run demo -- --kafka
  npm run demo -- --clean-up demo_1a2b3c4d

Exits 0 when the story ran (or the clean-up finished), 1 otherwise.
`;
}

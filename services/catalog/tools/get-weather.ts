import { z } from 'zod';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { WEATHER_CONDITIONS, type WeatherApi } from '../../downstreams/weather/weather-api.js';
import { callDownstream } from '../downstream-failure.js';

const input = z.strictObject({
  city: z
    .string()
    .min(2)
    .max(80)
    .describe("City name in English without state or country, e.g. 'Boston'. 2-80 characters."),
  units: z
    .enum(['metric', 'imperial'])
    .optional()
    .describe("'metric' (°C, km/h) or 'imperial' (°F, mph). Omit for metric."),
});

const output = z.object({
  city: z.string(),
  observed_at: z.string(),
  temperature: z.number(),
  temperature_unit: z.enum(['C', 'F']),
  conditions: z.enum(WEATHER_CONDITIONS),
  wind_speed: z.number(),
  wind_unit: z.enum(['km/h', 'mph']),
});

export type GetWeatherInput = z.infer<typeof input>;
export type GetWeatherOutput = z.infer<typeof output>;

const round1 = (n: number): number => Math.round(n * 10) / 10;

/**
 * `get_weather` (read-only): current conditions for a city, from a public weather service that is
 * sometimes slow or down. Its downstream `weather` has its own breaker, so a dead weather service
 * fails fast for every caller instead of costing each one a full timeout; retried once.
 */
export function getWeatherTool(deps: {
  readonly weather: WeatherApi;
}): ToolDefinition<GetWeatherInput, GetWeatherOutput> {
  return defineTool({
    name: 'get_weather',
    version: '1.0.0',
    description:
      'Get the current weather conditions for one city, e.g. when a customer asks whether a storm may delay a delivery. Use it for current or recent weather only; it has no forecasts, so for anything beyond today say you cannot forecast. Delivery status itself comes from lookup_order, not from the weather.',
    input,
    output,
    scopes: [],
    owner: 'platform-team',
    stateChanging: false,
    downstream: 'weather',
    timeoutMs: 1_500,
    retry: { maxAttempts: 2, baseDelayMs: 100, maxDelayMs: 400 },
    auditFields: ['city', 'units'],
    rateLimit: { capacity: 30, refillPerSecond: 5, per: ['tenant'] },
    cost: { tokensIn: 50, tokensOut: 60 },
    execute: async (args, inv) => {
      const observation = await callDownstream(
        () => deps.weather.current(args.city, inv.signal),
        (reason) =>
          reason === 'unknown_city'
            ? {
                message: `There is no weather station for '${args.city}'.`,
                suggestedFix: 'Check the spelling, or use the nearest large city.',
              }
            : undefined,
      );
      const imperial = args.units === 'imperial';
      return {
        city: observation.city,
        observed_at: observation.observed_at,
        temperature: imperial ? round1(observation.temperature_c * 1.8 + 32) : observation.temperature_c,
        temperature_unit: imperial ? ('F' as const) : ('C' as const),
        conditions: observation.conditions,
        wind_speed: imperial ? round1(observation.wind_kph / 1.609344) : observation.wind_kph,
        wind_unit: imperial ? ('mph' as const) : ('km/h' as const),
      };
    },
  });
}

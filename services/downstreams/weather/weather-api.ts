export const WEATHER_CONDITIONS = ['clear', 'cloudy', 'rain', 'snow', 'storm', 'fog'] as const;
export type WeatherCondition = (typeof WEATHER_CONDITIONS)[number];

/** The latest observation for a city, metric units. */
export interface Observation {
  readonly city: string;
  /** ISO 8601, UTC. */
  readonly observed_at: string;
  readonly temperature_c: number;
  readonly conditions: WeatherCondition;
  readonly wind_kph: number;
}

/**
 * A public weather service (read-only, tenant-free). `current` matches the city name
 * case-insensitively and refuses 404 `unknown_city` for a city it has no station for.
 */
export interface WeatherApi {
  current(city: string, signal?: AbortSignal): Promise<Observation>;
}

import { DownstreamError } from '../downstream-error.js';
import type { Observation, WeatherApi } from './weather-api.js';

/** In-process weather service over fixed observations. See {@link WeatherApi}. */
export class MemoryWeather implements WeatherApi {
  readonly #byCity = new Map<string, Observation>();

  constructor(observations: readonly Observation[]) {
    for (const o of observations) this.#byCity.set(o.city.toLowerCase(), { ...o });
  }

  async current(city: string): Promise<Observation> {
    const found = this.#byCity.get(city.trim().toLowerCase());
    if (found === undefined) throw new DownstreamError(404, 'unknown_city', 'No station for this city.');
    return { ...found };
  }
}

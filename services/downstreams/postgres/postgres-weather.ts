import type pg from 'pg';
import { DownstreamError } from '../downstream-error.js';
import type { Observation, WeatherApi, WeatherCondition } from '../weather/weather-api.js';

interface ObservationRow {
  city: string;
  observed_at: Date;
  temperature_c: number;
  conditions: WeatherCondition;
  wind_kph: number;
}

/** Weather service backed by `store_weather`. See {@link WeatherApi}. */
export class PostgresWeather implements WeatherApi {
  constructor(private readonly pool: pg.Pool) {}

  async current(city: string): Promise<Observation> {
    const { rows } = await this.pool.query<ObservationRow>(
      `SELECT city, observed_at, temperature_c::float8 AS temperature_c, conditions, wind_kph::float8 AS wind_kph
         FROM store_weather WHERE city_key = $1`,
      [city.trim().toLowerCase()],
    );
    const row = rows[0];
    if (row === undefined) throw new DownstreamError(404, 'unknown_city', 'No station for this city.');
    return { ...row, observed_at: row.observed_at.toISOString() };
  }
}

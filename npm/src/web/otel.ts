/**
 * workerd, workers, browsers: `@opentelemetry/api`, an optional peer
 * dependency, imported when the runtime can resolve it. The name is not a
 * literal so that a bundler without the package does not fail on it; where
 * it cannot be found, pass it as the `telemetry` option.
 */
import { useOpenTelemetry, type OpenTelemetryApi } from '../telemetry.js';

const name = '@opentelemetry/api';
import(/* @vite-ignore */ /* webpackIgnore: true */ name).then(
  (api: OpenTelemetryApi) => useOpenTelemetry(api),
  () => undefined,
);

/**
 * Node: `@opentelemetry/api`, an optional peer dependency, loaded
 * synchronously at import when it is installed (the API keeps its
 * providers on `globalThis`, so its CommonJS and ESM copies are one).
 */
import { createRequire } from 'node:module';

import { useOpenTelemetry, type OpenTelemetryApi } from '../telemetry.js';

try {
  useOpenTelemetry(createRequire(import.meta.url)('@opentelemetry/api') as OpenTelemetryApi);
} catch {
  // Not installed: nothing is recorded, and nothing costs more.
}

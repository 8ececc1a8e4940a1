/** The package's version (package.json's; npm/test/telemetry.test.mjs holds the two together), the meter's and tracer's. */
export const VERSION = '0.1.0';

/**
 * A verifier's options as the glue takes them: the core's configuration
 * JSON (snake_case setting names) in a `Uint8Array`.
 */
import { ToolctxError } from '../errors.js';
import { invalid } from './failures.js';

const encoder = new TextEncoder();

/** The options in the core's JSON form (snake_case); the core validates them. */
export function configJson(options: object, names: Record<string, string>, what: string): Uint8Array {
  if (options === null || typeof options !== 'object') throw invalid(`${what} needs an options object`);
  const config: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (key === 'includeReason' || value === undefined) continue;
    const name = Object.hasOwn(names, key) ? names[key] : undefined;
    if (name === undefined) throw new ToolctxError('config_unknown_setting', `unknown setting \`${key}\``);
    config[name] = value;
  }
  return encoder.encode(JSON.stringify(config));
}

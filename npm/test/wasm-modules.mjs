// Emulates workerd and bundlers in Node: a `.wasm` import yields a
// WebAssembly.Module, so the worker entries (dist/web/index.js,
// dist/web/helpers.js) load here. Import it before importing those, dynamically.
import { register } from 'node:module';

const hooks = `
export async function load(url, context, next) {
  if (url.endsWith('.wasm')) {
    return { format: 'module', shortCircuit: true, source:
      'import { readFileSync } from "node:fs";' +
      'export default new WebAssembly.Module(readFileSync(new URL(' + JSON.stringify(url) + ')));' };
  }
  return next(url, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);

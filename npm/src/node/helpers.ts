/**
 * Runs in Node: `toolctx/helpers` (export condition `node`). The same
 * helpers as `../web/helpers.ts`, with the core's rules through the Node
 * flavour of the conventions module (loaded synchronously, shared with
 * `toolctx/conventions`). The glue is imported first: the helpers read the
 * core's defaults when they load.
 */
import './conventions-glue.js';

export * from '../helpers-common.js';

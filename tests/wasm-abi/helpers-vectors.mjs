#!/usr/bin/env node
// node tests/wasm-abi/helpers-vectors.mjs DIR FILE...: the helper vectors
// (tests/vectors/helpers.json) through the raw modules in DIR
// (toolctx-helpers.wasm, and toolctx.wasm for the replay guard's kinds),
// each kind answered from the module's exports as a Go or Java host gets
// them, judged by npm's `runHelperVectors` (npm/test/helpers-vectors.mjs).
// Ends `N passed, N failed`.
import { join } from 'node:path';

import { runHelperVectors } from '../../npm/test/helpers-vectors.mjs';
import { AbiError, Instance } from './abi.mjs';

const [dir, ...files] = process.argv.slice(2);
if (dir === undefined || files.length === 0) {
  console.error('usage: node tests/wasm-abi/helpers-vectors.mjs DIR FILE...');
  process.exit(2);
}
const helpers = new Instance(join(dir, 'toolctx-helpers.wasm'));
const verifier = new Instance(join(dir, 'toolctx.wasm'));
const defaults = JSON.parse(helpers.text('toolctx_idem_defaults'));
const [replayPrefix] = verifier.list('toolctx_replay_defaults');

const hex = (s) => new Uint8Array(s.match(/../g)?.map((b) => parseInt(b, 16)) ?? []);
const raw = (d, name) => (typeof d[name] === 'string' ? new TextEncoder().encode(d[name]) : hex(d[`${name}_hex`]));
const toHex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const resultText = (i) => i.result_json_parts.map(([piece, times]) => piece.repeat(times)).join('');
const code = (e) => (e instanceof AbiError ? e.code : String(e));
const wait = (now, deadline, round) => Number(helpers.x.toolctx_idem_wait(BigInt(now), BigInt(deadline), round));

/** A reply of a vector (`{type, value | value_hex}`) as the kind and bytes the module reads. */
function reply(r) {
  if (r.type === 'bulk') return [r.type, raw(r, 'value')];
  if (r.type === 'integer') return [r.type, String(r.value)];
  if (r.type === 'nil' || r.type === 'other') return [r.type, ''];
  return [r.type, r.value];
}

const KINDS = {
  result_limits(i) {
    try {
      return { findings: JSON.parse(helpers.text('toolctx_check_result', [resultText(i)])) };
    } catch (e) {
      return { error: code(e) };
    }
  },
  progress(i) {
    // A host's timer loop: one timer, armed or moved by the answers.
    // The interval is the user's setting, read by the table as a host reads
    // it (toolctx_setting, a number: kind 3) before the coalescer is made.
    const interval = helpers.text('toolctx_setting', ['progress_interval_ms', ''], 3, i.interval_ms);
    const h = helpers.x.toolctx_progress_new(BigInt(interval));
    const sent = [];
    let now = 0;
    let timer = null;
    const apply = (answer) => {
      if (answer.startsWith('s')) {
        const r = JSON.parse(answer.slice(1));
        sent.push({ at: now, progress: r.progress, total: r.total ?? null, message: r.message ?? null });
      } else if (answer.startsWith('a') || answer.startsWith('w')) timer = Number(answer.slice(1));
      else if (answer === 'i') timer = null;
    };
    const advance = (to) => {
      while (timer !== null && timer <= to) {
        now = timer;
        timer = null;
        apply(helpers.text('toolctx_progress_tick', [], h, BigInt(now)));
      }
      now = to;
    };
    for (const ev of i.events) {
      advance(ev.at);
      if (ev.report) {
        const [progress, total, message] = ev.report;
        const has = typeof message === 'string';
        apply(helpers.text('toolctx_progress_report', [has ? message : ''], h, BigInt(now), progress, total ?? NaN, has ? 1 : 0));
      } else if (ev.flush) apply(helpers.text('toolctx_progress_flush', [], h, BigInt(now)));
      else helpers.x.toolctx_progress_close(h);
    }
    advance(Number.MAX_SAFE_INTEGER);
    helpers.x.toolctx_progress_free(h);
    return { sent };
  },
  'idempotency.store_key'(i) {
    const storeKey = helpers.text('toolctx_idem_store_key', [i.namespace, i.key]);
    return { store_key: storeKey, redis_key: helpers.text('toolctx_idem_redis_key', [i.prefix ?? defaults.keyPrefix, storeKey]) };
  },
  'idempotency.argument_hash'(i) {
    try {
      return { canonical: helpers.text('toolctx_canonical_json', [i.arguments_json]), hash: helpers.text('toolctx_idem_argument_hash', [i.arguments_json]) };
    } catch {
      return { error: true };
    }
  },
  'idempotency.entry'(i) {
    try {
      if (i.state === 'running') return { text: helpers.text('toolctx_idem_running', [i.hash, i.owner]) };
      return { text: helpers.text('toolctx_idem_done', [i.hash, i.result_json]) };
    } catch (e) {
      return { error: code(e) };
    }
  },
  'idempotency.held'(i) {
    const data = raw(i, 'held');
    try {
      helpers.text('toolctx_idem_read_entry', [data]);
      const a = helpers.text('toolctx_idem_held', [data, i.hash, i.revision]);
      return a === 'c' ? { answer: 'conflict' } : a === 'w' ? { answer: 'in_flight' } : { answer: 'replay', replayed: a.slice(1) };
    } catch (e) {
      return { error: code(e) };
    }
  },
  'idempotency.wait'(i) {
    const ms = wait(i.now_ms, i.deadline_ms, i.round);
    return ms < 0 ? { answer: 'in_progress' } : { sleep_ms: ms };
  },
  'idempotency.refusal'(i) {
    return { result_json: JSON.stringify(JSON.parse(helpers.text('toolctx_idem_refusal', [i.outcome, i.key]))) };
  },
  'idempotency.redis_commands'(i) {
    const key = helpers.text('toolctx_idem_redis_key', [i.prefix, helpers.text('toolctx_idem_store_key', [i.namespace, i.key])]);
    const running = helpers.text('toolctx_idem_running', [i.hash, i.owner]);
    const done = helpers.text('toolctx_idem_done', [i.hash, i.result_json]);
    const args = (command, entry, ms) => helpers.list('toolctx_idem_redis_args', [command, key, entry], BigInt(ms));
    return {
      claim: args('claim', running, i.lease_ms),
      read: args('read', '', 0),
      complete: args('complete', done, i.ttl_ms),
      release: args('release', running, 0),
    };
  },
  'idempotency.redis_reply'(i) {
    const [kind, value] = reply(i.reply);
    const meaning = helpers.text('toolctx_idem_redis_meaning', [i.command, kind, value]);
    if (meaning !== 'held') return { meaning };
    const held = value instanceof Uint8Array ? value : new TextEncoder().encode(value);
    const text = new TextDecoder('utf-8', { fatal: false }).decode(held);
    return new TextEncoder().encode(text).length === held.length && !text.includes('\uFFFD') ? { meaning, held: text } : { meaning, held_hex: toHex(held) };
  },
  'replay.redis_claim'(i) {
    return { args: verifier.list('toolctx_redis_claim_args', [i.prefix ?? replayPrefix, i.jti ?? 'j'], BigInt(i.until ?? 130), BigInt(i.now ?? 100)) };
  },
  'replay.redis_reply'(i) {
    return { answer: verifier.text('toolctx_redis_claim_answer', reply(i.reply)) };
  },
  'idempotency.defaults'() {
    return {
      ttl_ms: defaults.ttlMs,
      lease_ms: defaults.leaseMs,
      wait_ms: defaults.waitMs,
      memory_entries: defaults.memoryEntries,
      store_timeout_ms: defaults.storeTimeoutMs,
      claim_rounds: defaults.claimRounds,
      first_pause_ms: wait(0, 1e9, 0),
      max_pause_ms: wait(0, 1e9, 60),
      key_prefix: defaults.keyPrefix,
      release_script: defaults.releaseScript,
      replayed_key: defaults.replayed,
      outcome_key: defaults.outcomeKey,
    };
  },
};

await runHelperVectors(files, async (kind, input) => {
  const run = KINDS[kind];
  if (run === undefined) return { error: `unknown kind ${kind}` };
  try {
    return { answer: run(input) };
  } catch (e) {
    return { error: `${e?.name ?? 'Error'}: ${e?.message ?? String(e)}` };
  }
});

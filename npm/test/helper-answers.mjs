// The helper vectors' kinds (tests/vectors/helpers.json) answered by the
// npm package's `toolctx/helpers`, handed in as `api`: the same function in
// Node (npm/test/helpers-vectors.mjs) and inside workerd
// (tests/edge/harness/helper-vectors-worker.js). No imports, so that the worker's
// bundle holds the package once. Each answer is an object compared with
// the case's `expect`; one function per kind. The replay guard's kinds
// (`replay.*`) need `redisReplayStore` from the main entry `toolctx`
// (the verifier's module), handed in on `api` as well; inside workerd they
// run in a worker of their own (tests/edge/harness/replay-vectors-worker.js).

const hex = (s) => new Uint8Array(s.match(/../g)?.map((b) => parseInt(b, 16)) ?? []);
const raw = (d, name) => (typeof d[name] === 'string' ? new TextEncoder().encode(d[name]) : hex(d[`${name}_hex`]));
const toHex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const code = (e) => (typeof e?.code === 'string' ? e.code : String(e));

/** `send` for redisIdempotencyStore that records each command and answers from `replies`. */
function recorder(replies) {
  const sent = [];
  const send = async (args) => {
    sent.push(args);
    return replies.shift() ?? null;
  };
  return { sent, send };
}

/** The result's JSON text of a `result_limits` case (`[piece, times]` parts). */
const resultText = (i) => i.result_json_parts.map(([piece, times]) => piece.repeat(times)).join('');

/**
 * A clock whose timers fire only when `advance` passes their time (in the
 * order they fall due, a timer before an event at the same time), as the
 * progress vectors' times say.
 */
function fakeClock() {
  let now = 0;
  let seq = 0;
  const timers = new Map();
  const clock = {
    now: () => now,
    setTimeout: (fn, ms) => {
      seq += 1;
      timers.set(seq, { due: now + ms, fn });
      return seq;
    },
    clearTimeout: (id) => timers.delete(id),
  };
  const advance = async (to) => {
    for (;;) {
      const next = [...timers].filter(([, t]) => t.due <= to).sort(([a, x], [b, y]) => x.due - y.due || a - b)[0];
      if (next === undefined) break;
      timers.delete(next[0]);
      now = next[1].due;
      next[1].fn();
      await Promise.resolve();
    }
    now = to;
  };
  return { clock, advance };
}

/**
 * What a kind's answer is judged on when it is not the whole `expect`:
 * `progress` through the public reporter, which does not say what it did
 * with each report (the core's runner and Python's judge `answers`).
 */
export const JUDGED = {
  progress: ['sent'],
  // The reason a refusal carries is the verifier's; `redisReplayStore` says the answer.
  'replay.redis_reply': ['answer'],
};

/** The replay kinds' store: `redisReplayStore` on a `send` that records each command and answers `reply`. */
async function replayClaim(api, i, reply) {
  const { sent, send } = recorder([reply]);
  const store = api.redisReplayStore(send, i.prefix === undefined ? {} : { prefix: i.prefix });
  const answer = await store.firstUse(i.jti ?? 'j', i.until ?? 130, i.now ?? 100);
  return { sent, answer };
}

export const KINDS = {
  // The key `cancellable` tracks a call under and `noticeCancelled` looks it up by, as the package's conventions module answers it (`api.cancelKey`).
  'cancel.call_key'(api, i) {
    return { key: api.cancelKey(i.id_json, i.token) ?? null };
  },
  async result_limits(api, i) {
    let result;
    try {
      result = JSON.parse(resultText(i));
    } catch {
      // A text no JSON reader takes never reaches the helper.
      return { error: 'result_not_json' };
    }
    try {
      return { findings: api.checkResult(result) };
    } catch (e) {
      // The core's reason, which npm's message ends with in parentheses.
      return { error: /\((result_[a-z_]+)\)$/.exec(e?.message ?? '')?.[1] ?? code(e) };
    }
  },
  async progress(api, i) {
    const { clock, advance } = fakeClock();
    const abort = new AbortController();
    const sent = [];
    const extra = {
      _meta: { progressToken: 1 },
      signal: abort.signal,
      sendNotification: async (n) => {
        sent.push({ at: clock.now(), progress: n.params.progress, total: n.params.total ?? null, message: n.params.message ?? null });
      },
    };
    const report = api.progress(extra, { clock, intervalMs: i.interval_ms });
    for (const ev of i.events) {
      await advance(ev.at);
      if (ev.report) await report(ev.report[0], ev.report[1] ?? undefined, ev.report[2] ?? undefined);
      else if (ev.flush) await report.flush();
      else abort.abort();
    }
    await advance(Number.MAX_SAFE_INTEGER);
    return { sent };
  },

  async 'idempotency.store_key'(api, i) {
    const storeKey = api.idempotencyStoreKey(i.namespace, i.key);
    // The Redis store's own key: what its claim sends.
    const { sent, send } = recorder(['OK']);
    await api.redisIdempotencyStore(send, { prefix: i.prefix }).claim(storeKey, { state: 'running', hash: 'h', owner: 'o' }, 1000);
    return { store_key: storeKey, redis_key: sent[0][1] };
  },
  async 'idempotency.argument_hash'(api, i) {
    try {
      return { canonical: api.canonicalJson(JSON.parse(i.arguments_json)), hash: api.idempotencyRules.argumentHash(i.arguments_json) };
    } catch {
      return { error: true };
    }
  },
  async 'idempotency.entry'(api, i) {
    try {
      if (i.state === 'running') return { text: api.idempotencyRules.running(i.hash, i.owner) };
      return { text: api.idempotencyRules.done(i.hash, i.result_json) };
    } catch (e) {
      return { error: typeof e === 'string' ? e.slice(0, e.indexOf('\n')) : code(e) };
    }
  },
  async 'idempotency.held'(api, i) {
    const data = raw(i, 'held');
    try {
      api.idempotencyRules.readEntry(data);
      return api.idempotencyRules.held(data, i.hash, i.revision);
    } catch (e) {
      return { error: code(e) };
    }
  },
  async 'idempotency.wait'(api, i) {
    const ms = api.idempotencyRules.wait(i.now_ms, i.deadline_ms, i.round);
    return ms === null ? { answer: 'in_progress' } : { sleep_ms: ms };
  },
  async 'idempotency.refusal'(api, i) {
    // Through the wrapper: a conflict or in-progress refusal is what
    // `idempotent` answers by default; compared as JSON text.
    return { result_json: JSON.stringify(JSON.parse(api.idempotencyRules.refusal(i.outcome, i.key))) };
  },
  async 'idempotency.redis_commands'(api, i) {
    const rules = api.idempotencyRules;
    const mine = { state: 'running', hash: i.hash, owner: i.owner };
    const key = api.idempotencyStoreKey(i.namespace, i.key);
    // The store's commands, recorded: claim (taken), read (the running entry), claim (OK), complete, release.
    const { sent, send } = recorder([null, rules.running(i.hash, 'other'), 'OK', 'OK', 1]);
    const store = api.redisIdempotencyStore(send, { prefix: i.prefix });
    await store.claim(key, mine, i.lease_ms);
    await store.claim(key, mine, i.lease_ms);
    await store.complete(key, { state: 'done', hash: i.hash, result: JSON.parse(i.result_json) }, i.ttl_ms);
    await store.release(key, mine);
    const done = rules.done(i.hash, i.result_json);
    const complete = sent[3].slice();
    // JSON.parse rewrote the result's number texts: the entry is the core's, checked by value.
    if (JSON.stringify(JSON.parse(complete[2])) !== JSON.stringify(JSON.parse(done))) throw new Error(`complete wrote ${complete[2]}`);
    complete[2] = done;
    return { claim: sent[0], read: sent[1], complete, release: sent[4] };
  },
  async 'idempotency.redis_reply'(api, i) {
    const r = i.reply;
    // As node-redis hands a reply over: null, a string, a Buffer, a number, an Error.
    const reply = r.type === 'nil' ? null : r.type === 'status' ? r.value : r.type === 'bulk' ? raw(r, 'value') : r.type === 'integer' ? r.value : new Error(r.value);
    const { means, held } = api.idempotencyRules.redisReplyMeaning(i.command, reply);
    if (held === undefined) return { meaning: means };
    const text = new TextDecoder('utf-8', { fatal: false }).decode(held);
    return new TextEncoder().encode(text).length === held.length && !text.includes('\uFFFD') ? { meaning: means, held: text } : { meaning: means, held_hex: toHex(held) };
  },
  async 'replay.redis_claim'(api, i) {
    const { sent } = await replayClaim(api, i, 'OK');
    return { args: sent[0] };
  },
  async 'replay.redis_reply'(api, i) {
    const r = i.reply;
    // As node-redis hands a reply over: null, a string, a Buffer, a number, an Error; an array for any other shape.
    const reply =
      r.type === 'nil' ? null : r.type === 'status' ? r.value : r.type === 'bulk' ? raw(r, 'value') : r.type === 'integer' ? r.value : r.type === 'error' ? new Error(r.value) : [];
    const { answer } = await replayClaim(api, i, reply);
    return { answer };
  },
  async 'idempotency.defaults'(api) {
    const d = api.idempotencyDefaults();
    const first = api.idempotencyRules.wait(0, 1e9, 0);
    const max = api.idempotencyRules.wait(0, 1e9, 60);
    return {
      ttl_ms: d.ttlMs,
      lease_ms: d.leaseMs,
      wait_ms: d.waitMs,
      memory_entries: d.memoryEntries,
      store_timeout_ms: d.storeTimeoutMs,
      claim_rounds: d.claimRounds,
      first_pause_ms: first,
      max_pause_ms: max,
      key_prefix: d.keyPrefix,
      release_script: d.releaseScript,
      replayed_key: api.REPLAYED,
      outcome_key: d.outcomeKey,
    };
  },
};

/** One case's answer: `{ answer }`, or `{ error }` for an unknown kind or a throw. */
export async function helperAnswer(api, kind, input) {
  const run = KINDS[kind];
  if (run === undefined) return { error: `unknown kind ${kind}` };
  try {
    return { answer: await run(api, input) };
  } catch (e) {
    return { error: `${e?.name ?? 'Error'}: ${e?.message ?? String(e)}` };
  }
}

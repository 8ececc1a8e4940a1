/**
 * What every entry point records about a verdict: the `onVerdict` event,
 * and, when `@opentelemetry/api` is installed (an optional peer
 * dependency) and a provider is registered, the counter
 * `toolctx.verdicts`, the histogram `toolctx.check.duration` and the span
 * `toolctx.verify`. The names are the core's (crates/core/src/telemetry.rs,
 * written into `generated/telemetry.ts` at build from the conventions
 * module's `coreCodes`), and so are the
 * request's JSON-RPC method and tool (`describeRequest` of the verifier's
 * WebAssembly module, asked only when a span or `onVerdict` will use
 * them). In Node the API
 * is found by `node/otel.ts`; workerd, workers and browsers (where a
 * bundle holds only what it imports) get it as the `telemetry` option;
 * nothing here imports it.
 */
import { TELEMETRY } from './generated/telemetry.js';
import type { RefusalReason, Reject } from './types.js';
import { VERSION } from './version.js';

export { TELEMETRY };

/** One request's verdict, as the entry point that checked it saw it. Never holds a token, secret or credential. */
export interface VerdictEvent {
  outcome: 'accept' | 'pass' | 'reject';
  /** The core's reason: on refusals only. */
  reason?: RefusalReason;
  /** The HTTP status of a refusal. */
  status?: number;
  /** The request's JSON-RPC id, where the verdict carries it (refusals after the body was read, accepted calls). */
  requestId?: string | number | null;
  /**
   * The request's JSON-RPC method, where the core read the body (a POST not
   * refused on its credential or its size) and it names one: `tools/call`,
   * `tools/list`, a notification's.
   */
  method?: string;
  /** The tool called (`params.name` of a `tools/call`), where the core read the body. */
  tool?: string;
  /** On an accepted AgentArea call: the verified task and workspace. */
  taskId?: string;
  workspaceId?: string;
  /** The client's address, where the entry point knows it (the Node middleware). */
  peer?: string;
  /** From the start of the check to the verdict, reading the body included, in seconds. */
  durationSeconds: number;
  /** Which entry point checked the request. */
  entry: 'middleware' | 'fetch' | 'verify';
}

/**
 * The part of `@opentelemetry/api` (1.x, from 1.9.0) used here, typed
 * structurally so that the package's declarations never need it installed.
 */
export interface OpenTelemetryApi {
  metrics: { getMeterProvider(): { getMeter(name: string, version?: string): OtelMeter } };
  trace: { getTracerProvider(): { getTracer(name: string, version?: string): OtelTracer } };
  context: { active(): unknown };
  createNoopMeter(): OtelMeter;
  ProxyTracerProvider: new () => { getDelegate(): unknown };
}
interface OtelMeter {
  createCounter(name: string, options?: object): { add(value: number, attributes?: Attributes): void };
  createHistogram(name: string, options?: object): { record(value: number, attributes?: Attributes): void };
}
interface OtelTracer {
  startSpan(name: string, options?: { startTime?: number; attributes?: Attributes }, context?: unknown): OtelSpan;
}
interface OtelSpan {
  isRecording(): boolean;
  setAttributes(attributes: Attributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(endTime?: number): void;
}
type Attributes = Record<string, string | number>;

/** Options every entry point takes. */
export interface TelemetryOptions {
  /**
   * Record metrics and spans through `@opentelemetry/api` when it is
   * installed (default `true`; in Node it is found by itself); `false`
   * turns them off. In workerd, workers and browsers pass the API:
   * `import * as api from '@opentelemetry/api'; { telemetry: api }`.
   */
  telemetry?: boolean | OpenTelemetryApi;
  /** Called once per verdict this entry point reached, for any logger (pino, console). Errors it throws are ignored. */
  onVerdict?: (event: VerdictEvent) => void;
}

/** A verdict as `record` takes it: any of the entry points' results. */
type Decided =
  | { outcome: 'pass' }
  | { outcome: 'accept'; context: unknown }
  | Pick<Reject, 'outcome' | 'reason' | 'status' | 'id'>;

const SPAN_STATUS_ERROR = 2;

/** The API the flavour found (`useOpenTelemetry`), if any. */
let found: OpenTelemetryApi | undefined;

/** Called by `node/otel.ts` once the API is loaded. */
export function useOpenTelemetry(api: OpenTelemetryApi): void {
  found = api;
}

/**
 * Marks a request an entry point (middleware, fetch wrapper) records
 * itself, so the verifier it calls does not count it again.
 */
export const RECORDED: unique symbol = Symbol.for('toolctx.recorded') as never;

/**
 * The core's description of a request (`describeRequest` of a verifier's
 * WebAssembly module, `toolctx_core::telemetry::describe`): `[]`,
 * `[method]` or `[method, tool]`; `reason` empty unless the verdict is a
 * refusal.
 */
export type DescribeRequest = (method: string, body: Uint8Array, reason: string) => string[];

/** Where a verifier keeps its `DescribeRequest`, for the middleware and the fetch wrapper. */
export const DESCRIBE: unique symbol = Symbol.for('toolctx.describeRequest') as never;

/** The `DescribeRequest` of `verifier`, when it has one (the package's verifiers do). */
export function describerOf(verifier: object): DescribeRequest | undefined {
  const d = (verifier as { [DESCRIBE]?: unknown })[DESCRIBE];
  return typeof d === 'function' ? (d as DescribeRequest) : undefined;
}

/** The request a body verdict is on, as the core was handed it, and how to describe it. */
export interface Seen {
  method: string;
  body: Uint8Array | (() => Uint8Array);
  describe: DescribeRequest | undefined;
}

/** Where a verifier keeps its `TelemetryOptions`, which the middleware and the fetch wrapper default to. */
export const TELEMETRY_OPTIONS: unique symbol = Symbol.for('toolctx.telemetryOptions') as never;

/** An entry point's options over those of the verifier it wraps. */
export function entryOptions(options: TelemetryOptions, verifier: object): TelemetryOptions {
  const given = (verifier as { [TELEMETRY_OPTIONS]?: TelemetryOptions })[TELEMETRY_OPTIONS];
  return { telemetry: options.telemetry ?? given?.telemetry, onVerdict: options.onVerdict ?? given?.onVerdict };
}

/** True when `request` carries `RECORDED`. */
export function recordedBy(request: unknown): boolean {
  return typeof request === 'object' && request !== null && (request as Record<symbol, unknown>)[RECORDED] === true;
}

/** The counter and histogram made for one meter provider (`null`: the no-op one). */
interface Instruments {
  counter: ReturnType<OtelMeter['createCounter']>;
  histogram: ReturnType<OtelMeter['createHistogram']>;
}
const instrumentsByApi = new WeakMap<OpenTelemetryApi, { provider: unknown; made: Instruments | null }>();
const tracers = new WeakMap<OpenTelemetryApi, { provider: unknown; tracer: OtelTracer }>();

/**
 * The instruments of the meter provider registered now, made again when
 * the global provider changes (one registered after the verifier was
 * created gets every verdict from then on); `null` without one.
 */
function instruments(api: OpenTelemetryApi): Instruments | null {
  const provider = api.metrics.getMeterProvider();
  const held = instrumentsByApi.get(api);
  if (held !== undefined && held.provider === provider) return held.made;
  const meter = provider.getMeter(TELEMETRY.scope, VERSION);
  const made: Instruments | null =
    meter === api.createNoopMeter()
      ? null
      : {
          counter: meter.createCounter(TELEMETRY.verdicts, { description: 'Requests answered or handed on, by verdict.' }),
          histogram: meter.createHistogram(TELEMETRY.checkDuration, {
            description: 'From the start of a check to its verdict, reading the body included.',
            unit: TELEMETRY.checkDurationUnit,
            advice: { explicitBucketBoundaries: [...TELEMETRY.durationBucketsSeconds] },
          }),
        };
  instrumentsByApi.set(api, { provider, made });
  return made;
}

const noTracerProviders = new WeakMap<OpenTelemetryApi, unknown>();

/**
 * True once a meter or a tracer provider is registered (asked per request,
 * so one registered later is used from then on): until then nothing is
 * timed or built.
 */
function providers(api: OpenTelemetryApi): boolean {
  if (instruments(api) !== null) return true;
  const tracing = api.trace.getTracerProvider() as { getDelegate?: () => unknown };
  if (typeof tracing.getDelegate !== 'function') return true;
  let none = noTracerProviders.get(api);
  if (none === undefined) {
    // What the API's proxy delegates to while no provider is registered.
    none = new api.ProxyTracerProvider().getDelegate();
    noTracerProviders.set(api, none);
  }
  return tracing.getDelegate() !== none;
}

/** The tracer of the tracer provider registered now (the API's proxy follows one registered later). */
function tracer(api: OpenTelemetryApi): OtelTracer {
  const provider = api.trace.getTracerProvider();
  const held = tracers.get(api);
  if (held !== undefined && held.provider === provider) return held.tracer;
  const made = provider.getTracer(TELEMETRY.scope, VERSION);
  tracers.set(api, { provider, tracer: made });
  return made;
}

const clock: () => number = typeof performance !== 'undefined' ? () => performance.now() : () => Date.now();
const origin = typeof performance !== 'undefined' && typeof performance.timeOrigin === 'number' ? performance.timeOrigin : 0;

/** A check under way: when it started and the context its span is a child of. */
export interface Started {
  at: number;
  /** The API to record through: none when no provider was registered at the start. */
  api: OpenTelemetryApi | undefined;
  parent: unknown;
}

/** What one entry point records, from its options. */
export class Recorder {
  readonly #api: OpenTelemetryApi | 'found' | undefined;
  readonly #onVerdict: ((event: VerdictEvent) => void) | undefined;
  readonly #entry: VerdictEvent['entry'];

  constructor(options: TelemetryOptions | undefined, entry: VerdictEvent['entry']) {
    const t = options?.telemetry ?? true;
    if (typeof t === 'object' && t !== null) this.#api = t;
    else if (t === true) this.#api = 'found';
    else if (t === false) this.#api = undefined;
    else throw new TypeError('setting `telemetry` must be a boolean or the @opentelemetry/api module');
    const hook = options?.onVerdict;
    if (hook !== undefined && typeof hook !== 'function') throw new TypeError('setting `onVerdict` must be a function');
    this.#onVerdict = hook;
    this.#entry = entry;
  }

  #otel(): OpenTelemetryApi | undefined {
    return this.#api === 'found' ? found : this.#api;
  }

  /** Call where the check starts (before the headers are looked at); `undefined` when nothing is recorded. */
  start(): Started | undefined {
    let api = this.#otel();
    if (api !== undefined && !providers(api)) api = undefined;
    if (api === undefined && this.#onVerdict === undefined) return undefined;
    // The span's parent: the span active where the check began.
    return { at: clock(), api, parent: api === undefined ? undefined : api.context.active() };
  }

  /**
   * Records the verdict of the check begun at `started`, on the request
   * `seen` (none for a verdict on the headers alone). Never throws.
   */
  record(started: Started | undefined, result: Decided, peer?: string, seen?: Seen): void {
    if (started === undefined) return;
    const end = clock();
    const seconds = (end - started.at) / 1000;
    const api = started.api;
    const event = verdictEvent(result, seconds, this.#entry, peer);
    // The method and tool, asked of the core once, when a span or the hook wants them.
    let described = false;
    const describe = (): void => {
      if (described) return;
      described = true;
      describeInto(event, result, seen);
    };
    if (api !== undefined) {
      try {
        otelRecord(api, event, started, end, describe);
      } catch {
        // A misbehaving SDK never changes a verdict.
      }
    }
    if (this.#onVerdict !== undefined) {
      try {
        describe();
        this.#onVerdict(event);
      } catch {
        // Nor does a logger that throws.
      }
    }
  }
}

function verdictEvent(result: Decided, seconds: number, entry: VerdictEvent['entry'], peer: string | undefined): VerdictEvent {
  const event: VerdictEvent = { outcome: result.outcome, durationSeconds: seconds, entry };
  if (result.outcome === 'reject') {
    event.reason = result.reason;
    event.status = result.status;
    event.requestId = result.id;
  } else if (result.outcome === 'accept') {
    const c = result.context as { task_id?: unknown; workspace_id?: unknown; request_id?: unknown };
    if (typeof c.task_id === 'string') event.taskId = c.task_id;
    if (typeof c.workspace_id === 'string') event.workspaceId = c.workspace_id;
    if (typeof c.request_id === 'string' || typeof c.request_id === 'number') event.requestId = c.request_id;
  }
  if (peer !== undefined) event.peer = peer;
  return event;
}

/** Sets `event.method` and `event.tool` as the core read them. Never throws: a request it cannot describe has neither. */
function describeInto(event: VerdictEvent, result: Decided, seen: Seen | undefined): void {
  try {
    if (result.outcome === 'accept') {
      // The tool the token names is `params.name`: no second read of the body.
      const tool = (result.context as { tool?: unknown }).tool;
      if (typeof tool === 'string') {
        event.method = 'tools/call';
        event.tool = tool;
        return;
      }
    }
    if (seen === undefined || seen.describe === undefined) return;
    const body = typeof seen.body === 'function' ? seen.body() : seen.body;
    const [method, tool] = seen.describe(seen.method, body, result.outcome === 'reject' ? result.reason : '');
    if (method !== undefined) event.method = method;
    if (tool !== undefined) event.tool = tool;
  } catch {
    // Described or not, the verdict stands.
  }
}

function otelRecord(api: OpenTelemetryApi, event: VerdictEvent, started: Started, end: number, describe: () => void): void {
  const t = TELEMETRY;
  // `toolctx.reason` only on refusals: absent, never empty, otherwise.
  const attributes: Attributes = event.reason === undefined ? { [t.outcome]: event.outcome } : { [t.outcome]: event.outcome, [t.reason]: event.reason };
  const m = instruments(api);
  if (m !== null) {
    m.counter.add(1, attributes);
    m.histogram.record(event.durationSeconds, { [t.outcome]: event.outcome });
  }
  const span = tracer(api).startSpan(t.span, { startTime: origin + started.at, attributes }, started.parent);
  // No tracer provider, or a sampler that drops it: nothing more to gather.
  if (!span.isRecording()) {
    span.end(origin + end);
    return;
  }
  describe();
  const more: Attributes = {};
  if (event.method !== undefined) more[t.mcpMethod] = event.method;
  if (event.tool !== undefined) more[t.tool] = event.tool;
  if (event.taskId !== undefined) more[t.taskId] = event.taskId;
  if (event.workspaceId !== undefined) more[t.workspaceId] = event.workspaceId;
  span.setAttributes(more);
  if (event.outcome === 'reject') span.setStatus({ code: SPAN_STATUS_ERROR, message: event.reason });
  span.end(origin + end);
}

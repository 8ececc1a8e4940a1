/**
 * Tool results and the platform's limits on them (CONTRACT §5): text over
 * 8000 characters is offloaded (the model sees a pointer and a preview),
 * `structuredContent` over 16000 characters of JSON is dropped, images are
 * PNG, JPEG, GIF or WebP up to 5 MB and at most 8 per result. The platform
 * applies these silently; these helpers say so while you develop. The
 * limits, how each is measured and the findings are the core's
 * (`toolctx_core::helpers::results`, through the conventions module).
 */
import { core } from './core-functions.js';
import { ToolctxError } from './errors.js';

export interface TextContent {
  type: 'text';
  text: string;
}

export interface ImageContent {
  type: 'image';
  /** Base64 of the image bytes. */
  data: string;
  mimeType: string;
}

/** The content blocks these builders make (any MCP content block passes `checkResult`). */
export type Content = TextContent | ImageContent;

/** A `tools/call` result (MCP `CallToolResult`), typed by its `structuredContent`. */
export interface ToolResult<S extends Record<string, unknown> = Record<string, unknown>> {
  content: Content[];
  structuredContent?: S;
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The image types the platform keeps (the core's list; test/codes.test.mjs compares). */
export type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

const limits = JSON.parse(core().resultLimits()) as {
  textChars: number;
  structuredChars: number;
  imageBytes: number;
  images: number;
  imageTypes: ImageType[];
};

/** The core's limits. */
export const LIMITS = Object.freeze({
  /** Characters (code points) of text content; more is offloaded. */
  textChars: limits.textChars,
  /** Characters (code points) of `JSON.stringify(structuredContent)`; more is dropped. */
  structuredChars: limits.structuredChars,
  /** Decoded bytes of one image (5 MiB). */
  imageBytes: limits.imageBytes,
  /** Images per result. */
  images: limits.images,
  imageTypes: Object.freeze(limits.imageTypes) as readonly ImageType[],
});

/** The findings' codes (the core's `LimitCode`; test/codes.test.mjs compares). */
export type LimitCode = 'text_offloaded' | 'structured_dropped' | 'image_type' | 'image_too_large' | 'too_many_images';

/** One limit a result runs into, and what the platform will do about it. */
export interface LimitFinding {
  code: LimitCode;
  message: string;
  /** What was measured (characters, bytes or images). */
  size: number;
  limit: number;
  /** The content block concerned, when it is one block. */
  index?: number;
}

export type LimitHook = (finding: LimitFinding) => void;

export interface LimitOptions {
  /**
   * Called once per finding. Default: `console.warn` unless
   * `NODE_ENV === 'production'` (then nothing). Throw from it to make a
   * test fail on any limit.
   */
  onLimit?: LimitHook;
}

/** The default hook: warn in development, stay silent in production. */
export const warnInDevelopment: LimitHook = (finding) => {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  if (env?.['NODE_ENV'] === 'production') return;
  console.warn(`toolctx: ${finding.message}`);
};

/**
 * The limits `result` runs into, in the core's order; an empty list when it
 * is within all of them. A result that is not JSON the platform reads (a
 * lone surrogate, a cycle, a `BigInt`) throws a `ToolctxError`
 * (`invalid_argument`).
 */
export function checkResult(result: { content?: readonly unknown[]; structuredContent?: unknown }): LimitFinding[] {
  let json: string | undefined;
  try {
    json = JSON.stringify(result);
  } catch (e) {
    throw new ToolctxError('invalid_argument', `checkResult: the result is not JSON: ${String(e)}`);
  }
  if (json === undefined) throw new ToolctxError('invalid_argument', 'checkResult: the result is not JSON');
  let found: string;
  try {
    found = core().checkResult(json);
  } catch (e) {
    // The core throws "<code>\n<message>": the message, then the code.
    const [reason = '', ...message] = String(e).split('\n');
    throw new ToolctxError('invalid_argument', `checkResult: ${message.join('\n')} (${reason})`);
  }
  return JSON.parse(found) as LimitFinding[];
}

/** Runs `checkResult` and reports each finding to the hook; returns `result` unchanged. */
export function checked<R extends { content?: readonly unknown[]; structuredContent?: unknown }>(result: R, options: LimitOptions = {}): R {
  const hook = options.onLimit ?? warnInDevelopment;
  for (const finding of checkResult(result)) hook(finding);
  return result;
}

/** A text content block. */
export function text(value: string): TextContent {
  return { type: 'text', text: value };
}

/** An image content block from bytes or base64; the type is checked against the platform's list. */
export function image(data: Uint8Array | string, mimeType: ImageType): ImageContent {
  return { type: 'image', data: typeof data === 'string' ? data : toBase64(data), mimeType };
}

/** A result from content blocks (strings become text blocks), checked against the limits. */
export function toolResult(content: ReadonlyArray<Content | string>, options: LimitOptions = {}): ToolResult {
  return checked({ content: content.map((c) => (typeof c === 'string' ? text(c) : c)) }, options);
}

/** A text result, checked against the limits. */
export function textResult(value: string, options: LimitOptions = {}): ToolResult {
  return checked({ content: [text(value)] }, options);
}

/**
 * A result with `structuredContent` and, for models that read only
 * `content`, the same JSON as text (or `options.text`); checked against the
 * limits.
 */
export function jsonResult<S extends Record<string, unknown>>(
  structured: S,
  options: LimitOptions & { text?: string } = {},
): ToolResult<S> {
  return checked({ content: [text(options.text ?? JSON.stringify(structured))], structuredContent: structured }, options);
}

/** A failed call (`isError: true`): `message` is what the model reads. */
export function errorResult(message: string): ToolResult {
  return { content: [text(message)], isError: true };
}

/** Wraps a tool handler so that every result it returns is checked against the limits. */
export function withLimits<A, E, R extends { content?: readonly unknown[]; structuredContent?: unknown }>(
  handler: (args: A, extra: E) => R | Promise<R>,
  options: LimitOptions = {},
): (args: A, extra: E) => Promise<R> {
  return async (args, extra) => checked(await handler(args, extra), options);
}

function toBase64(bytes: Uint8Array): string {
  const B = (globalThis as { Buffer?: { from(b: Uint8Array): { toString(enc: string): string } } }).Buffer;
  if (B) return B.from(bytes).toString('base64');
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * Tool results and the platform's limits on them (CONTRACT §5): text over
 * 8000 characters is offloaded (the model sees a pointer and a preview),
 * `structuredContent` over 16000 characters of JSON is dropped, images are
 * PNG, JPEG, GIF or WebP up to 5 MB and at most 8 per result. The platform
 * applies these silently; these helpers say so while you develop.
 */

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

/** An embedded resource; one with an `image/*` blob counts as an image. */
interface ResourceContent {
  type: 'resource';
  resource: { uri: string; mimeType?: string; text?: string; blob?: string };
}

/** A `tools/call` result (MCP `CallToolResult`), typed by its `structuredContent`. */
export interface ToolResult<S extends Record<string, unknown> = Record<string, unknown>> {
  content: Content[];
  structuredContent?: S;
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

export const LIMITS = Object.freeze({
  /** Characters (code points) of text content; more is offloaded. */
  textChars: 8000,
  /** Characters (code points) of `JSON.stringify(structuredContent)`; more is dropped. */
  structuredChars: 16000,
  /** Bytes of one image (5 MiB). */
  imageBytes: 5 * 1024 * 1024,
  /** Images per result. */
  images: 8,
  imageTypes: Object.freeze(['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const),
});

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

/** The limits `result` runs into; an empty list when it is within all of them. */
export function checkResult(result: { content?: readonly unknown[]; structuredContent?: unknown }): LimitFinding[] {
  const findings: LimitFinding[] = [];
  let textChars = 0;
  let images = 0;
  (result.content ?? []).forEach((block, index) => {
    const b = (block ?? {}) as { type?: unknown; text?: unknown; data?: unknown; mimeType?: unknown; resource?: Partial<ResourceContent['resource']> };
    if (b.type === 'text' && typeof b.text === 'string') {
      textChars += codePoints(b.text);
      return;
    }
    let mimeType: string | undefined;
    let data: string | undefined;
    if (b.type === 'image') {
      mimeType = typeof b.mimeType === 'string' ? b.mimeType : undefined;
      data = typeof b.data === 'string' ? b.data : undefined;
    } else if (b.type === 'resource' && typeof b.resource?.blob === 'string' && b.resource.mimeType?.startsWith('image/')) {
      mimeType = b.resource.mimeType;
      data = b.resource.blob;
    } else {
      return;
    }
    images += 1;
    if (!(LIMITS.imageTypes as readonly string[]).includes(mimeType ?? '')) {
      findings.push({
        code: 'image_type',
        message: `image ${index} is ${mimeType ?? 'untyped'}: only PNG, JPEG, GIF and WebP images are kept`,
        size: 0,
        limit: 0,
        index,
      });
    }
    const bytes = base64Bytes(data ?? '');
    if (bytes > LIMITS.imageBytes) {
      findings.push({
        code: 'image_too_large',
        message: `image ${index} is ${bytes} bytes, over the ${LIMITS.imageBytes}-byte limit`,
        size: bytes,
        limit: LIMITS.imageBytes,
        index,
      });
    }
  });
  if (textChars > LIMITS.textChars) {
    findings.push({
      code: 'text_offloaded',
      message: `the result's text is ${textChars} characters: over ${LIMITS.textChars} the platform offloads it and the model sees a pointer and a preview`,
      size: textChars,
      limit: LIMITS.textChars,
    });
  }
  if (images > LIMITS.images) {
    findings.push({
      code: 'too_many_images',
      message: `the result has ${images} images, more than ${LIMITS.images}`,
      size: images,
      limit: LIMITS.images,
    });
  }
  if (result.structuredContent !== undefined) {
    const chars = codePoints(JSON.stringify(result.structuredContent) ?? '');
    if (chars > LIMITS.structuredChars) {
      findings.push({
        code: 'structured_dropped',
        message: `structuredContent is ${chars} characters of JSON: over ${LIMITS.structuredChars} the platform drops it`,
        size: chars,
        limit: LIMITS.structuredChars,
      });
    }
  }
  return findings;
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
export function image(data: Uint8Array | string, mimeType: (typeof LIMITS.imageTypes)[number]): ImageContent {
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

function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one character.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n -= 1;
        i += 1;
      }
    }
  }
  return n;
}

function base64Bytes(b64: string): number {
  let len = b64.length;
  while (len > 0 && b64.charCodeAt(len - 1) === 61 /* = */) len -= 1;
  return Math.floor((len * 3) / 4);
}

function toBase64(bytes: Uint8Array): string {
  const B = (globalThis as { Buffer?: { from(b: Uint8Array): { toString(enc: string): string } } }).Buffer;
  if (B) return B.from(bytes).toString('base64');
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

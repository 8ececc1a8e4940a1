package dev.toolctx;

import java.util.OptionalInt;

/**
 * One platform limit a tool result runs into, as the core found it: its
 * code ({@code text_offloaded}, {@code structured_dropped},
 * {@code image_type}, {@code image_too_large}, {@code too_many_images}),
 * what the platform will do about it, what was measured (characters, bytes
 * or images), the limit, and the content block concerned when it is one.
 */
public record LimitFinding(String code, String message, long size, long limit, OptionalInt index) {}

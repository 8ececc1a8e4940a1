package dev.toolctx;

/**
 * The core's settings table (docs/CONTRACT.md, "Settings"): every setting a
 * front end accepts has one default, one range and one reading of absent,
 * zero, negative and wrong-typed values, and a text holding an unresolved
 * {@code ${NAME}} placeholder is refused ({@code config_placeholder}).
 * Java hands the user's value over as it came and applies the answer.
 */
public final class Settings {
    private Settings() {}

    /**
     * The value to use for setting {@code name} (the core's name, e.g.
     * {@code idempotency_ttl_ms}) from the user's {@code raw} value: null is
     * not given; a Boolean, a Number (a Duration in milliseconds), a
     * String; anything else is the wrong type. The answer as the core
     * writes it ({@code true}/{@code false}, decimal digits, the text).
     *
     * @throws ToolctxException the core's refusal ({@code config_type},
     *     {@code limit_out_of_range}, {@code config_placeholder}, ...)
     */
    public static String read(String name, Object raw) {
        Raw r = Raw.of(raw);
        return HelpersCore.setting(name, r.kind(), r.number(), r.text());
    }

    /** A user's value as the core's table takes it: its kind, number and text ({@code toolctx_setting}'s). */
    record Raw(int kind, double number, String text) {
        static Raw of(Object raw) {
            if (raw == null) return new Raw(0, 0, "");
            if (raw instanceof Boolean b) return new Raw(b ? 2 : 1, 0, "");
            if (raw instanceof java.time.Duration d) return new Raw(3, d.toNanos() / 1e6, "");
            if (raw instanceof Number n) return new Raw(3, n.doubleValue(), "");
            if (raw instanceof String s) return new Raw(4, 0, s);
            return new Raw(5, 0, "");
        }
    }

    /** {@link #read} for a numeric setting. */
    public static long number(String name, Object raw) {
        return Long.parseLong(read(name, raw));
    }
}

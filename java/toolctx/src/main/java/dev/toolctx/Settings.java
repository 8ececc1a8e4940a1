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
        int kind;
        double number = 0;
        String text = "";
        if (raw == null) {
            kind = 0;
        } else if (raw instanceof Boolean b) {
            kind = b ? 2 : 1;
        } else if (raw instanceof java.time.Duration d) {
            kind = 3;
            number = d.toNanos() / 1e6;
        } else if (raw instanceof Number n) {
            kind = 3;
            number = n.doubleValue();
        } else if (raw instanceof String s) {
            kind = 4;
            text = s;
        } else {
            kind = 5;
        }
        return HelpersCore.setting(name, kind, number, text);
    }

    /** {@link #read} for a numeric setting. */
    public static long number(String name, Object raw) {
        return Long.parseLong(read(name, raw));
    }
}

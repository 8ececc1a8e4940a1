package dev.toolctx;

import com.fasterxml.jackson.databind.JsonNode;
import dev.toolctx.internal.CoreInstance;
import dev.toolctx.internal.CoreRuntime;
import dev.toolctx.internal.Fields;
import dev.toolctx.internal.Pool;
import java.util.List;

/**
 * The server helpers' rules, in the core's helpers (toolctx-helpers.wasm,
 * or the native library: {@link Verifier#runtime}): every key, hash, entry encoding, decision, wait,
 * refusal, Redis command and reply meaning is asked of it here.
 */
final class HelpersCore {
    private static final Pool<CoreInstance> POOL = new Pool<>(CoreRuntime::helpers, 16);
    private static volatile JsonNode defaults;
    private static volatile JsonNode limits;

    private HelpersCore() {}

    private static byte[][] in(Object... fields) {
        byte[][] out = new byte[fields.length][];
        for (int i = 0; i < fields.length; i++) out[i] = fields[i] instanceof byte[] ? (byte[]) fields[i] : Fields.utf8((String) fields[i]);
        return out;
    }

    static String text(String export, Object... fields) {
        byte[][] input = in(fields);
        return Fields.text(POOL.with(w -> Verifier.text(w.call(export, input))));
    }

    /** toolctx_setting: the settings table over a raw kind, number and text (Settings). */
    static String setting(String name, int kind, double number, String text) {
        byte[][] input = in(name, text);
        return Fields.text(POOL.with(w -> Verifier.text(w.call("toolctx_setting", input, kind, Double.doubleToRawLongBits(number)))));
    }

    static List<byte[]> list(String export, long arg, Object... fields) {
        byte[][] input = in(fields);
        return POOL.with(w -> Fields.decode(Verifier.text(w.call(export, input, arg)), 0));
    }

    /** An export's JSON answer (no input); {@code what} names it in the error. */
    private static JsonNode json(String export, String what) {
        try {
            return VerifierOptions.JSON.readTree(text(export));
        } catch (java.io.IOException e) {
            throw new ToolctxException("internal", "the core's " + what + " are not JSON");
        }
    }

    /** The core's idempotency defaults (key prefix, ttl, lease, wait, memory entries, store timeout, claim rounds). */
    static JsonNode defaults() {
        JsonNode d = defaults;
        if (d == null) defaults = d = json("toolctx_idem_defaults", "idempotency defaults");
        return d;
    }

    /** The core's result limits (textChars, structuredChars, imageBytes, images, imageTypes, codes, progressIntervalMs). */
    static JsonNode resultLimits() {
        JsonNode l = limits;
        if (l == null) limits = l = json("toolctx_result_limits", "result limits");
        return l;
    }

    /** Milliseconds to sleep before the next claim, or -1: refuse in_progress. */
    static long waitMs(long elapsedMs, long waitMs, int round) {
        return POOL.with(w -> w.number("toolctx_idem_wait", new byte[0][], elapsedMs, waitMs, round));
    }
}

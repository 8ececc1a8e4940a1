package dev.toolctx;

import dev.toolctx.internal.Fields;
import dev.toolctx.internal.CoreInstance;
import dev.toolctx.internal.CoreRuntime;
import dev.toolctx.internal.Trap;
import java.lang.ref.Cleaner;

/**
 * One call's progress coalescing, the core's (toolctx-helpers.wasm's
 * {@code toolctx_progress_*}): what is sent now, held until a time, or
 * dropped. A coalescer lives inside one instance of the module, so every
 * coalescer shares one instance, one caller at a time (progress is not on
 * every request's path). Answers are the core's tagged strings: {@code s} +
 * the report to send (JSON), {@code a}/{@code w} + the time to ask again
 * (arm a timer), {@code h} + the flush time (a timer already waits),
 * {@code d} + why it was dropped, {@code i} or nothing: nothing to do.
 */
final class Coalescer {
    private static final Object LOCK = new Object();
    private static final Cleaner CLEANER = Cleaner.create();
    /** The instance every coalescer lives in; replaced after a trap (the coalescers in it are gone). */
    private static CoreInstance shared;

    private final CoreInstance home;
    private final int handle;
    private final Cleaner.Cleanable freeing;

    /**
     * A coalescer sending at most one report per {@code intervalMs}, as the
     * core's settings table reads it ({@code progress_interval_ms}: 0 the
     * platform's interval; anything outside 1 to 60,000 refused).
     *
     * @throws ToolctxException the core's refusal ({@code limit_out_of_range})
     */
    Coalescer(long intervalMs) {
        long interval = Settings.number("progress_interval_ms", intervalMs);
        synchronized (LOCK) {
            if (shared == null) shared = CoreRuntime.helpers();
            this.home = shared;
            this.handle = (int) (long) guarded(home, () -> home.number("toolctx_progress_new", new byte[0][], interval));
        }
        // A coalescer dropped without free() is freed in the module all the same.
        CoreInstance h = home;
        int id = handle;
        this.freeing = CLEANER.register(this, () -> release(h, id));
    }

    private interface Op<T> {
        T run();
    }

    /** Runs {@code op} on {@code home} (LOCK held); a trap retires the shared instance. */
    private static <T> T guarded(CoreInstance home, Op<T> op) {
        try {
            return op.run();
        } catch (Trap t) {
            if (shared == home) shared = null;
            throw new ToolctxException("internal", "progress: the core's module trapped", t);
        }
    }

    private <T> T on(Op<T> op) {
        synchronized (LOCK) {
            if (shared != home) throw new ToolctxException("internal", "progress: the core's instance holding this call's progress is gone");
            return guarded(home, op);
        }
    }

    private String answer(String export, byte[][] fields, long... args) {
        return on(() -> Fields.text(Verifier.text(home.call(export, fields, args))));
    }

    /** A report at {@code nowMs}: {@code s}, {@code a}, {@code h} or {@code d} + .... {@code total} NaN: none; {@code message} null: none. */
    String report(long nowMs, double progress, double total, String message) {
        byte[][] in = {message == null ? new byte[0] : Fields.utf8(message)};
        return answer("toolctx_progress_report", in, handle, nowMs, Double.doubleToRawLongBits(progress),
                Double.doubleToRawLongBits(total), message == null ? 0 : 1);
    }

    /** A timer fired at {@code nowMs}: {@code s}, {@code w} or {@code i}. */
    String tick(long nowMs) {
        return answer("toolctx_progress_tick", new byte[0][], handle, nowMs);
    }

    /** {@code s} + the held report to send now, or nothing. */
    String flush(long nowMs) {
        return answer("toolctx_progress_flush", new byte[0][], handle, nowMs);
    }

    /** The call ended: later reports are dropped. */
    void close() {
        on(() -> home.number("toolctx_progress_close", new byte[0][], handle));
    }

    /** Reports sent so far. */
    long sent() {
        return on(() -> home.number("toolctx_progress_sent", new byte[0][], handle));
    }

    /** Frees the coalescer in the module; it is not used after. */
    void free() {
        freeing.clean();
    }

    private static void release(CoreInstance home, int handle) {
        synchronized (LOCK) {
            if (shared != home) return;
            try {
                home.number("toolctx_progress_free", new byte[0][], handle);
            } catch (Trap t) {
                shared = null;
            }
        }
    }
}

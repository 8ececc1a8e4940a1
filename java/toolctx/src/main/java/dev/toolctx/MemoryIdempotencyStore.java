package dev.toolctx;

import dev.toolctx.internal.CoreInstance;
import dev.toolctx.internal.CoreRuntime;
import dev.toolctx.internal.Fields;
import dev.toolctx.internal.Trap;
import java.util.Arrays;
import java.util.function.LongSupplier;

/**
 * The idempotency store of one process: the core's store (expiry, capacity,
 * the release rule: CONTRACT §5.1) on a helpers instance of its own, called
 * under this store's lock with the host's clock. After a trap in the core
 * every call throws: the tool does not run.
 */
public final class MemoryIdempotencyStore implements IdempotencyStore {
    private final CoreInstance core = CoreRuntime.helpers();
    private final LongSupplier clock;
    /** The entries it holds at most, as the core read them. */
    final int capacity;
    private boolean broken;

    MemoryIdempotencyStore(Object entries, LongSupplier clock) {
        this.clock = clock;
        Settings.Raw raw = Settings.Raw.of(entries);
        byte[][] in = {Fields.utf8(raw.text())};
        this.capacity = Integer.parseInt(Fields.text(Verifier.text(
                core.call("toolctx_idem_memory", in, raw.kind(), Double.doubleToRawLongBits(raw.number())))));
    }

    /** A store of the core's default size. */
    public static MemoryIdempotencyStore create() {
        return new MemoryIdempotencyStore(null, System::currentTimeMillis);
    }

    /** A store for at most {@code entries} (the settings table's {@code idempotency_memory_entries}: 0 its default, out of range refused). */
    public static MemoryIdempotencyStore create(long entries) {
        return new MemoryIdempotencyStore(entries, System::currentTimeMillis);
    }

    /** One of the store's operations on {@code fields}, with the numbers {@code ms}, then now. */
    synchronized String ask(String op, String[] fields, long... ms) {
        if (broken) throw new ToolctxException("internal", "the in-memory idempotency store is gone: the core trapped");
        byte[][] in = new byte[fields.length][];
        for (int i = 0; i < fields.length; i++) in[i] = Fields.utf8(fields[i]);
        long[] args = Arrays.copyOf(ms, ms.length + 1);
        args[ms.length] = clock.getAsLong();
        try {
            return Fields.text(Verifier.text(core.call(op, in, args)));
        } catch (Trap t) {
            broken = true;
            throw t;
        }
    }

    @Override
    public String claim(String key, String running, long leaseMs) {
        String held = ask("toolctx_idem_memory_claim", new String[] {key, running}, leaseMs);
        return held.equals("n") ? null : held.substring(1);
    }

    @Override
    public void complete(String key, String done, long ttlMs) {
        ask("toolctx_idem_memory_complete", new String[] {key, done}, ttlMs);
    }

    @Override
    public void release(String key, String running) {
        ask("toolctx_idem_memory_release", new String[] {key, running});
    }

    /** Entries held now (expired ones leave at the next call). */
    public synchronized int size() {
        return (int) core.number("toolctx_idem_memory_len", new byte[0][]);
    }
}

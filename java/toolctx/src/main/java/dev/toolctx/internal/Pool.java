package dev.toolctx.internal;

import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Instances of one module, each handed to one caller at a time. A caller
 * takes one (a new one when none is idle), uses it and gives it back; an
 * instance that trapped is not given back, so it is never used again.
 * {@code limit} idle instances are kept; more are dropped (the JVM frees
 * them).
 */
public final class Pool<T> {
    private final Supplier<T> create;
    private final ConcurrentLinkedDeque<T> idle = new ConcurrentLinkedDeque<>();
    private final int limit;

    public Pool(Supplier<T> create, int limit) {
        this.create = create;
        this.limit = limit;
    }

    /** Runs {@code use} on an instance; one that threw is dropped. */
    public <R> R with(Function<T, R> use) {
        T it = idle.pollFirst();
        if (it == null) it = create.get();
        // An instance whose use threw (a trap above all) is not given back.
        R out = use.apply(it);
        if (idle.size() < limit) idle.offerFirst(it);
        return out;
    }
}

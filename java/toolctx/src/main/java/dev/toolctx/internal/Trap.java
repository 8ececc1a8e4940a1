package dev.toolctx.internal;

/** A failure inside the core (a wasm trap, a native panic): the instance must be dropped. */
public final class Trap extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Trap(String export, Throwable cause) {
        super("toolctx: the core trapped in " + export, cause);
    }
}

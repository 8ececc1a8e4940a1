package dev.toolctx.internal;

/**
 * One instance of the core (crates/wasm-abi, ABI version 1), whichever
 * runtime holds it ({@link CoreRuntime}): fields in, the core's answer out.
 * Not thread-safe: a {@link Pool} hands each to one caller at a time. Any
 * failure inside the core (a wasm trap, a native panic) throws {@link Trap};
 * the instance is then dropped, never used again.
 */
public interface CoreInstance {
    /** The version of the ABI this front end speaks. */
    int ABI_VERSION = 1;

    /**
     * Writes {@code fields} as the operation's input, calls export {@code name}
     * with {@code args} and returns its answer (first byte {@code =} or {@code !}).
     */
    byte[] call(String name, byte[][] fields, long... args);

    /** Calls an export that answers a number (no answer text). */
    long number(String name, byte[][] fields, long... args);
}

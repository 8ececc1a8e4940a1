package dev.toolctx.internal;

import java.nio.file.Path;

/**
 * The native runtime's instance on Java 17 to 21, which have no FFM: never
 * loaded ({@link CoreRuntime} chooses Chicory). The jar's
 * {@code META-INF/versions/22} holds the real one (src/main/java22).
 */
final class NativeInstance implements CoreInstance {
    private NativeInstance() {}

    static void load(Path library) {
        throw new UnsupportedOperationException("the native core needs Java " + CoreRuntime.NATIVE_JAVA + " or later (java.lang.foreign)");
    }

    static NativeInstance create() {
        throw new UnsupportedOperationException("the native core is not loaded");
    }

    @Override
    public byte[] call(String name, byte[][] fields, long... args) {
        throw new UnsupportedOperationException("the native core is not loaded");
    }

    @Override
    public long number(String name, byte[][] fields, long... args) {
        throw new UnsupportedOperationException("the native core is not loaded");
    }
}

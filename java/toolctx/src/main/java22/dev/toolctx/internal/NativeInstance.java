package dev.toolctx.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.ref.Cleaner;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One instance of the core's native library (crates/wasm-abi built native,
 * its {@code toolctx_native_*} exports: the crate's native.rs), called
 * through FFM: Java 22 and later (this class is in the jar's
 * {@code META-INF/versions/22}). Each instance is a handle of its own in
 * the library (as a wasm instance is its own memory). A panic in the core is
 * caught at the export, which answers TRAP: the handle is freed at once and
 * {@link Trap} thrown, as for a wasm trap.
 */
final class NativeInstance implements CoreInstance {
    /** What an operation that panicked returns (native.rs {@code TRAP}). */
    private static final long TRAP = Long.MIN_VALUE;
    /** Every operation: (handle, input, input length, args, args count) -> length or number. */
    private static final FunctionDescriptor OP = FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG);
    private static final Linker LINKER = Linker.nativeLinker();
    private static final Cleaner CLEANER = Cleaner.create();
    private static volatile Library library;

    /** The loaded library's entry points. */
    private record Library(SymbolLookup symbols, MethodHandle create, MethodHandle free, MethodHandle output,
            ConcurrentHashMap<String, MethodHandle> ops) {
        /** {@code toolctx_<op>}'s native export. */
        MethodHandle op(String name) {
            return ops.computeIfAbsent(name, n -> {
                String symbol = "toolctx_native_" + n.substring("toolctx_".length());
                MemorySegment at = symbols.find(symbol).orElseThrow(() -> new IllegalArgumentException("no native export " + symbol));
                // critical: no thread-state transition, and the input and
                // args arrays are read in place (the core copies or parses
                // them before it returns; it never calls back into Java).
                return LINKER.downcallHandle(at, OP, Linker.Option.critical(true));
            });
        }
    }

    private final Library lib;
    private final MemorySegment handle;
    private final Cleaner.Cleanable freed;
    private boolean trapped;

    private NativeInstance(Library lib) {
        this.lib = lib;
        try {
            this.handle = (MemorySegment) lib.create.invokeExact();
        } catch (Throwable e) {
            throw new IllegalStateException("toolctx: no native core instance", e);
        }
        if (handle.equals(MemorySegment.NULL)) throw new IllegalStateException("toolctx: no native core instance");
        // Freed when the pool lets go of it, or at once after a panic.
        this.freed = CLEANER.register(this, new Free(lib.free, handle));
    }

    /** Loads the library at {@code path} and checks its ABI version. */
    static void load(Path path) {
        SymbolLookup symbols = SymbolLookup.libraryLookup(path, Arena.global());
        int version;
        try {
            version = (int) downcall(symbols, "toolctx_native_version", FunctionDescriptor.of(JAVA_INT)).invokeExact();
        } catch (Throwable e) {
            throw new IllegalStateException("toolctx: the native core's version", e);
        }
        if (version != ABI_VERSION) {
            throw new IllegalStateException("toolctx: the native core speaks ABI " + version + ", not " + ABI_VERSION);
        }
        library = new Library(symbols,
                downcall(symbols, "toolctx_native_new", FunctionDescriptor.of(ADDRESS)),
                downcall(symbols, "toolctx_native_free", FunctionDescriptor.ofVoid(ADDRESS)),
                downcall(symbols, "toolctx_native_output", FunctionDescriptor.of(ADDRESS, ADDRESS)),
                new ConcurrentHashMap<>());
    }

    private static MethodHandle downcall(SymbolLookup symbols, String name, FunctionDescriptor type) {
        MemorySegment at = symbols.find(name).orElseThrow(() -> new IllegalStateException("toolctx: the native core has no " + name));
        return LINKER.downcallHandle(at, type);
    }

    /** A new instance (its own handle); the library must be loaded. */
    static NativeInstance create() {
        Library lib = library;
        if (lib == null) throw new IllegalStateException("toolctx: the native core is not loaded");
        return new NativeInstance(lib);
    }

    @Override
    public byte[] call(String name, byte[][] fields, long... args) {
        long len = invoke(name, fields, args);
        if (len < 0 || len > Integer.MAX_VALUE) throw new Trap(name, null);
        MemorySegment out;
        try {
            out = (MemorySegment) lib.output.invokeExact(handle);
        } catch (Throwable e) {
            throw new Trap(name, e);
        }
        if (out.equals(MemorySegment.NULL)) throw new Trap(name, null);
        return out.reinterpret(len).toArray(JAVA_BYTE);
    }

    @Override
    public long number(String name, byte[][] fields, long... args) {
        return invoke(name, fields, args);
    }

    private long invoke(String name, byte[][] fields, long[] args) {
        if (trapped) throw new Trap(name, null);
        byte[] in = Fields.encode(fields);
        long out;
        try {
            out = (long) lib.op(name).invokeExact(handle, MemorySegment.ofArray(in), (long) in.length, MemorySegment.ofArray(args), (long) args.length);
        } catch (Throwable e) {
            throw new Trap(name, e);
        }
        if (out == TRAP) {
            // The core panicked: this handle is poisoned; free it now.
            trapped = true;
            freed.clean();
            throw new Trap(name, null);
        }
        return out;
    }

    /** Frees a handle (the Cleaner's action: holds no reference to the instance). */
    private record Free(MethodHandle free, MemorySegment handle) implements Runnable {
        @Override
        public void run() {
            try {
                free.invokeExact(handle);
            } catch (Throwable e) {
                // Nothing to do: the handle is lost, never used again.
            }
        }
    }
}

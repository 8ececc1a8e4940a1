package dev.toolctx.internal;

import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Supplier;

/**
 * The one place the core's runtime is chosen, once per process:
 * <ul>
 *   <li>{@code native}: the core's native library through FFM
 *       ({@code java.lang.foreign}), when this JVM is Java 22 or later and
 *       the jar carries the library for this platform
 *       ({@code dev/toolctx/native/<os>-<arch>/}); about ten times faster
 *       (java/README.md);</li>
 *   <li>{@code chicory}: the core's wasm module compiled to JVM bytecode,
 *       pure JVM, everywhere else (Java 17 to 21, other platforms).</li>
 * </ul>
 * The system property {@code toolctx.runtime} ({@code chicory} or
 * {@code native}) forces one. A native library that fails to load falls
 * back to Chicory with one warning line: the core still decides every
 * request either way.
 */
public final class CoreRuntime {
    /** The system property that forces a runtime: {@code chicory} or {@code native}. */
    public static final String PROPERTY = "toolctx.runtime";
    /** The first Java whose FFM ({@code java.lang.foreign}) is final. */
    static final int NATIVE_JAVA = 22;

    private static final System.Logger LOG = System.getLogger("dev.toolctx");
    private static final CoreRuntime SELECTED = select();

    private final String name;
    private final Supplier<CoreInstance> verifier;
    private final Supplier<CoreInstance> helpers;

    private CoreRuntime(String name, Supplier<CoreInstance> verifier, Supplier<CoreInstance> helpers) {
        this.name = name;
        this.verifier = verifier;
        this.helpers = helpers;
    }

    /** The runtime in use: {@code native} or {@code chicory}. */
    public static String name() {
        return SELECTED.name;
    }

    /** A new instance of the verifier's core. */
    public static CoreInstance verifier() {
        return SELECTED.verifier.get();
    }

    /** A new instance of the helpers' core. */
    public static CoreInstance helpers() {
        return SELECTED.helpers.get();
    }

    private static CoreRuntime select() {
        CoreRuntime chicory = new CoreRuntime("chicory", WasmInstance::verifier, WasmInstance::helpers);
        String asked = System.getProperty(PROPERTY, "").trim();
        if (asked.equals("chicory")) return chicory;
        boolean forced = asked.equals("native");
        if (!forced && !asked.isEmpty()) {
            LOG.log(Level.WARNING, "toolctx: " + PROPERTY + "=" + asked + " is neither chicory nor native; choosing by the platform");
        }
        if (!forced && Runtime.version().feature() < NATIVE_JAVA) return chicory;
        Path library = null;
        try {
            library = NativeLibrary.extract();
            if (library == null) {
                // No library for this platform in the jar: Chicory, as designed.
                Level level = forced ? Level.WARNING : Level.DEBUG;
                LOG.log(level, "toolctx: no native core for " + NativeLibrary.platform() + "; running the core on Chicory");
                return chicory;
            }
            NativeInstance.load(library);
            // The library is mapped: its file is no longer needed.
            deleteQuietly(library);
            return new CoreRuntime("native", NativeInstance::create, NativeInstance::create);
        } catch (Exception | LinkageError e) {
            deleteQuietly(library);
            LOG.log(Level.WARNING, "toolctx: the native core did not load (" + e + "); running the core on Chicory");
            return chicory;
        }
    }

    private static void deleteQuietly(Path file) {
        if (file == null) return;
        try {
            Files.deleteIfExists(file);
        } catch (Exception e) {
            file.toFile().deleteOnExit();
        }
    }
}

package dev.toolctx.internal;

import com.dylibso.chicory.runtime.ByteArrayMemory;
import com.dylibso.chicory.runtime.ExportFunction;
import com.dylibso.chicory.runtime.Instance;
import com.dylibso.chicory.runtime.Machine;
import com.dylibso.chicory.runtime.Memory;
import com.dylibso.chicory.wasm.WasmModule;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * One instance of a core module (crates/wasm-abi, ABI version 1), compiled
 * to JVM bytecode at build time by Chicory: the pure-JVM runtime
 * ({@link CoreRuntime}). A trap inside the module throws {@link Trap}.
 */
public final class WasmInstance implements CoreInstance {
    private final Instance instance;
    private final Memory memory;
    private final ExportFunction input;
    private final Map<String, ExportFunction> exports = new HashMap<>();

    WasmInstance(WasmModule module, Function<Instance, Machine> machine) {
        // ByteArrayMemory (a byte[] read through VarHandles) rather than
        // Chicory's default ByteBufferMemory: every load and store of the
        // module goes through it, and the profile showed ByteBuffer's
        // bounds-checked reads first among the module's own functions.
        this.instance = Instance.builder(module).withMachineFactory(machine).withMemoryFactory(ByteArrayMemory::new).build();
        this.memory = instance.memory();
        this.input = instance.export("toolctx_input");
        long version = export("toolctx_version").apply()[0];
        if (version != ABI_VERSION) {
            throw new IllegalStateException("toolctx: the embedded module speaks ABI " + version + ", not " + ABI_VERSION);
        }
    }

    /** The verifier's module (toolctx.wasm). */
    public static WasmInstance verifier() {
        return new WasmInstance(VerifierModule.load(), VerifierModule::create);
    }

    /** The helpers' module (toolctx-helpers.wasm). */
    public static WasmInstance helpers() {
        return new WasmInstance(HelpersModule.load(), HelpersModule::create);
    }

    private ExportFunction export(String name) {
        return exports.computeIfAbsent(name, instance::export);
    }

    @Override
    public byte[] call(String name, byte[][] fields, long... args) {
        try {
            writeInput(fields);
            long at = export(name).apply(args)[0];
            int ptr = (int) (at >>> 32);
            int len = (int) at;
            return memory.readBytes(ptr, len);
        } catch (RuntimeException e) {
            throw new Trap(name, e);
        }
    }

    @Override
    public long number(String name, byte[][] fields, long... args) {
        try {
            writeInput(fields);
            long[] out = export(name).apply(args);
            return out == null || out.length == 0 ? 0 : out[0];
        } catch (RuntimeException e) {
            throw new Trap(name, e);
        }
    }

    private void writeInput(byte[][] fields) {
        byte[] bytes = Fields.encode(fields);
        int ptr = (int) input.apply(bytes.length)[0];
        if (ptr == 0 && bytes.length > 0) {
            throw new IllegalStateException("the module has no room for " + bytes.length + " input bytes");
        }
        memory.write(ptr, bytes);
    }
}

package dev.toolctx.internal;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code toolctx_configure}'s flag bits by name, as the verifier module
 * answers them ({@code toolctx_configure_flags}; crates/wasm-abi writes them
 * once): read from the module the first time one is asked for, never
 * written down here.
 */
public final class ConfigureFlags {
    private ConfigureFlags() {}

    /** Read on first use (the holder idiom: once, thread-safe). */
    private static final class Held {
        static final Map<String, Integer> FLAGS = read();
    }

    private static Map<String, Integer> read() {
        byte[] answer = CoreRuntime.verifier().call("toolctx_configure_flags", new byte[0][]);
        if (answer.length == 0 || answer[0] != '=') throw new IllegalStateException("toolctx: the core gave no configure flags");
        List<byte[]> items = Fields.decode(answer, 1);
        if (items.size() % 2 != 0) throw new IllegalStateException("toolctx: the core's configure flags are not name and bit pairs");
        Map<String, Integer> flags = new HashMap<>();
        for (int i = 0; i + 1 < items.size(); i += 2) flags.put(Fields.text(items.get(i)), Integer.parseInt(Fields.text(items.get(i + 1))));
        return Map.copyOf(flags);
    }

    /** The bit of the flag {@code name}; throws when the module has none. */
    public static int bit(String name) {
        Integer bit = Held.FLAGS.get(name);
        if (bit == null) throw new IllegalStateException("toolctx: the core has no configure flag " + name);
        return bit;
    }
}

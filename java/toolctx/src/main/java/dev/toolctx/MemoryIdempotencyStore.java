package dev.toolctx;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/** The idempotency store of one process: at most the core's number of entries, the least recently used dropped first. */
public final class MemoryIdempotencyStore implements IdempotencyStore {
    private record Slot(String entry, long expires) {}

    private final LinkedHashMap<String, Slot> entries = new LinkedHashMap<>(16, 0.75f, true);
    private final int max;
    private final LongSupplier clock;

    private MemoryIdempotencyStore(int max, LongSupplier clock) {
        this.max = max;
        this.clock = clock;
    }

    public static MemoryIdempotencyStore create() {
        return new MemoryIdempotencyStore(HelpersCore.defaults().path("memoryEntries").asInt(), System::currentTimeMillis);
    }

    private String live(String key) {
        Slot s = entries.get(key);
        if (s == null) return null;
        if (s.expires() <= clock.getAsLong()) {
            entries.remove(key);
            return null;
        }
        return s.entry();
    }

    private void put(String key, String entry, long ms) {
        entries.remove(key);
        entries.put(key, new Slot(entry, clock.getAsLong() + ms));
        Iterator<Map.Entry<String, Slot>> it = entries.entrySet().iterator();
        while (entries.size() > max && it.hasNext()) {
            it.next();
            it.remove();
        }
    }

    @Override
    public synchronized String claim(String key, String running, long leaseMs) {
        String held = live(key);
        if (held != null) return held;
        put(key, running, leaseMs);
        return null;
    }

    @Override
    public synchronized void complete(String key, String done, long ttlMs) {
        put(key, done, ttlMs);
    }

    @Override
    public synchronized void release(String key, String running) throws Exception {
        String held = live(key);
        if (held == null) return;
        JsonNode h = VerifierOptions.JSON.readTree(HelpersCore.text("toolctx_idem_read_entry", held));
        JsonNode mine = VerifierOptions.JSON.readTree(HelpersCore.text("toolctx_idem_read_entry", running));
        if ("running".equals(h.path("state").asText()) && h.path("owner").equals(mine.path("owner"))) entries.remove(key);
    }

    /** Entries held now (tests). */
    public synchronized int size() {
        return entries.size();
    }
}

package dev.toolctx;

/**
 * Where {@link Idempotent} keeps its entries: each entry is the core's
 * encoding (a running claim or a done result), stored and handed back as
 * it is. {@link MemoryIdempotencyStore} for one process,
 * {@link RedisIdempotencyStore} shared with the other languages.
 */
public interface IdempotencyStore {
    /** Claims {@code key} with {@code running} for {@code leaseMs}; null when claimed, else the entry that holds it. */
    String claim(String key, String running, long leaseMs) throws Exception;

    /** Stores the done entry for {@code ttlMs}. */
    void complete(String key, String done, long ttlMs) throws Exception;

    /** Removes {@code running} if it still holds the key (the tool failed). */
    void release(String key, String running) throws Exception;
}

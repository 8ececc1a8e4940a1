package dev.toolctx;

import dev.toolctx.internal.Fields;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.List;

/**
 * The idempotency store in Redis (Lettuce), shared with the Node, Python
 * and Rust front ends: the core writes the key, the commands and the entry,
 * and says what each reply means.
 */
public final class RedisIdempotencyStore implements IdempotencyStore {
    private final RedisCommands redis;
    private final String prefix;
    private final int claimRounds;

    private RedisIdempotencyStore(RedisCommands redis, String prefix, int claimRounds) {
        this.redis = redis;
        this.prefix = prefix;
        this.claimRounds = claimRounds;
    }

    /** With the core's key prefix and store timeout. */
    public static RedisIdempotencyStore create(StatefulRedisConnection<?, ?> connection) {
        return create(connection, null, 0);
    }

    /**
     * With your key prefix (null: the core's; read by the settings table,
     * {@code idempotency_key_prefix}) and the wait for a reply in ms (a
     * reply that does not come fails the call; the tool does not run): 0 is
     * the core's store timeout (500); the core refuses anything outside 1 to
     * 60,000 ({@code limit_out_of_range}).
     */
    public static RedisIdempotencyStore create(StatefulRedisConnection<?, ?> connection, String prefix, long timeoutMs) {
        return new RedisIdempotencyStore(new RedisCommands(connection, Verifier.redisTimeoutMs(timeoutMs)),
                Settings.read("idempotency_key_prefix", prefix),
                HelpersCore.defaults().path("claimRounds").asInt());
    }

    private RedisCommands.Reply ask(String command, String key, String entry, long ms, List<String> expected) {
        List<byte[]> args = HelpersCore.list("toolctx_idem_redis_args", ms, command, HelpersCore.text("toolctx_idem_redis_key", prefix, key), entry);
        RedisCommands.Reply reply = redis.send(args);
        String means = HelpersCore.text("toolctx_idem_redis_meaning", command, reply.kind(), reply.value());
        if (!expected.contains(means)) throw new IllegalStateException("toolctx: redis answered " + command + " with a reply that means " + means);
        return new RedisCommands.Reply(means, reply.value());
    }

    @Override
    public String claim(String key, String running, long leaseMs) {
        // The held value can expire between the SET and the GET: try again.
        for (int round = 0; round < claimRounds; round++) {
            if (ask("claim", key, running, leaseMs, List.of("claimed", "taken")).kind().equals("claimed")) return null;
            RedisCommands.Reply read = ask("read", key, "", 0, List.of("held", "gone"));
            if (read.kind().equals("held")) return Fields.text(read.value());
        }
        throw new IllegalStateException("toolctx: could not claim or read the key");
    }

    @Override
    public void complete(String key, String done, long ttlMs) {
        ask("complete", key, done, ttlMs, List.of("stored"));
    }

    @Override
    public void release(String key, String running) {
        ask("release", key, running, 0, List.of("released", "not_held"));
    }
}

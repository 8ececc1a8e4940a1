package dev.toolctx;

import dev.toolctx.internal.Fields;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.List;

/**
 * The replay guard shared through Redis (Lettuce): the core says what to
 * send (its key prefix, the command) and what the reply means; the entries
 * are the ones every other toolctx front end writes.
 */
public final class RedisReplayStore implements ReplayStore {
    private final RedisCommands redis;
    private final String prefix;

    private RedisReplayStore(RedisCommands redis, String prefix) {
        this.redis = redis;
        this.prefix = prefix;
    }

    /** With the core's key prefix and store timeout. */
    public static RedisReplayStore create(StatefulRedisConnection<?, ?> connection) {
        return create(connection, Verifier.replayDefaults().get(0), 0);
    }

    /**
     * With your key prefix and the wait for a reply in ms (a reply that does
     * not come is {@code failed}): 0 is the core's store timeout (500);
     * the core refuses anything outside 1 to 60,000 ({@code limit_out_of_range}).
     */
    public static RedisReplayStore create(StatefulRedisConnection<?, ?> connection, String prefix, long timeoutMs) {
        return new RedisReplayStore(new RedisCommands(connection, Verifier.redisTimeoutMs(timeoutMs)), prefix);
    }

    @Override
    public String firstUse(String jti, long until, long now) {
        List<byte[]> args = Verifier.plain(w -> Fields.decode(
                Verifier.text(w.call("toolctx_redis_claim_args", new byte[][] {Fields.utf8(prefix), Fields.utf8(jti)}, until, now)), 0));
        RedisCommands.Reply reply = redis.send(args);
        byte[][] in = {Fields.utf8(reply.kind()), reply.value()};
        return Fields.text(Verifier.plain(w -> Verifier.text(w.call("toolctx_redis_claim_answer", in))));
    }

}

package dev.toolctx;

/**
 * A replay store shared by several processes ({@link RedisReplayStore}, or
 * your own). {@code firstUse} must be atomic across every process sharing
 * it. Its answer goes to the core as it came: {@code first_use},
 * {@code used}, {@code full}, {@code failed}; anything else, or a throw,
 * is {@code failed}. The core decides what each answer means.
 */
@FunctionalInterface
public interface ReplayStore {
    /** Records {@code jti} as used until {@code until} (Unix seconds; {@code now} is the verifier's clock). */
    String firstUse(String jti, long until, long now) throws Exception;
}

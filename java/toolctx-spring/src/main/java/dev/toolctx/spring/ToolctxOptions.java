package dev.toolctx.spring;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.toolctx.ReplayStore;
import dev.toolctx.Settings;
import dev.toolctx.ToolctxException;
import dev.toolctx.VerifierOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@link ToolctxProperties} to {@link VerifierOptions}, one property to one
 * option: nothing is checked or defaulted here (the core does both, and
 * {@link dev.toolctx.Verifier#create} throws its error), except what only
 * Spring can get wrong: two sources for one setting.
 */
final class ToolctxOptions {
    private ToolctxOptions() {}

    static VerifierOptions from(ToolctxProperties p, ReplayStore store) {
        refusePlaceholders(p);
        VerifierOptions o;
        if (p.coreConfig() != null) {
            List<String> also = coreOptionsSet(p);
            if (!also.isEmpty()) {
                throw new ToolctxException("config_conflict",
                        "toolctx.core-config is set, and so are toolctx." + String.join(", toolctx.", also) + ": give the core's settings one way");
            }
            o = VerifierOptions.fromCoreConfig(p.coreConfig());
        } else {
            o = VerifierOptions.builder();
            if (p.instanceId() != null) o.instanceId(p.instanceId());
            if (p.secrets() != null) o.secrets(p.secrets());
            if (p.credential() != null) {
                ToolctxProperties.Credential c = p.credential();
                o.credential(c.header(), c.values() == null ? List.of() : c.values());
            }
            if (p.requireContext() != null) o.requireContext(p.requireContext());
            if (p.clockSkewSeconds() != null) o.clockSkewSeconds(p.clockSkewSeconds());
            if (p.maxTokenAgeSeconds() != null) o.maxTokenAgeSeconds(p.maxTokenAgeSeconds());
            if (p.maxBodyBytes() != null) o.maxBodyBytes(p.maxBodyBytes());
            if (p.maxTokenBytes() != null) o.maxTokenBytes(p.maxTokenBytes());
            if (p.protocolMajors() != null) o.protocolMajors(p.protocolMajors());
            if (p.forward() != null) o.forward(forward(p.forward()));
        }
        if (p.includeReason() != null) o.includeReason(p.includeReason());
        if (store != null && p.replayCapacity() != null) {
            throw new ToolctxException("config_conflict", "toolctx.replay-capacity (in memory) and a replay store (Redis) are both set: choose one");
        }
        if (store != null) o.replayStore(store);
        else if (p.replayCapacity() != null) o.memoryReplayGuard(p.replayCapacity());
        return o;
    }

    /**
     * Every text property read by the core's settings table, so that one
     * Spring left as an unresolved {@code ${NAME}} (its variable unset) stops
     * startup ({@code config_placeholder}) and is never used as an instance
     * id, a secret or an address. Each is read as the core's setting it
     * holds (a configuration JSON, a credential's header and the forward
     * setting as the instance id's text).
     */
    private static void refusePlaceholders(ToolctxProperties p) {
        text("core-config", "instance_id", p.coreConfig());
        text("instance-id", "instance_id", p.instanceId());
        if (p.secrets() != null) p.secrets().forEach(s -> text("secrets", "secret", s));
        if (p.credential() != null) {
            text("credential.header", "instance_id", p.credential().header());
            if (p.credential().values() != null) p.credential().values().forEach(v -> text("credential.values", "secret", v));
        }
        text("forward", "instance_id", p.forward());
        text("redis-url", "redis_url", p.redisUrl());
    }

    private static void text(String property, String setting, String value) {
        if (value == null) return;
        try {
            Settings.read(setting, value);
        } catch (ToolctxException e) {
            throw new ToolctxException(e.code(), "toolctx." + property + ": " + e.getMessage());
        }
    }

    /** The names of the core's own settings given as properties beside toolctx.core-config. */
    private static List<String> coreOptionsSet(ToolctxProperties p) {
        List<String> set = new ArrayList<>();
        if (p.instanceId() != null) set.add("instance-id");
        if (p.secrets() != null) set.add("secrets");
        if (p.credential() != null) set.add("credential");
        if (p.requireContext() != null) set.add("require-context");
        if (p.clockSkewSeconds() != null) set.add("clock-skew-seconds");
        if (p.maxTokenAgeSeconds() != null) set.add("max-token-age-seconds");
        if (p.maxBodyBytes() != null) set.add("max-body-bytes");
        if (p.maxTokenBytes() != null) set.add("max-token-bytes");
        if (p.protocolMajors() != null) set.add("protocol-majors");
        if (p.forward() != null) set.add("forward");
        return set;
    }

    /** toolctx.forward's JSON object, handed to the core as it is (the core reads it). */
    private static Map<String, Object> forward(String json) {
        try {
            return new ObjectMapper().readValue(json, new TypeReference<Map<String, Object>>() {});
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new ToolctxException("config_invalid", "toolctx.forward is not a JSON object");
        }
    }
}

package dev.toolctx.spring;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.toolctx.ReplayStore;
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
        VerifierOptions o;
        if (p.getCoreConfig() != null) {
            List<String> also = coreOptionsSet(p);
            if (!also.isEmpty()) {
                throw new ToolctxException("config_conflict",
                        "toolctx.core-config is set, and so are toolctx." + String.join(", toolctx.", also) + ": give the core's settings one way");
            }
            o = VerifierOptions.fromCoreConfig(p.getCoreConfig());
        } else {
            o = VerifierOptions.builder();
            if (p.getInstanceId() != null) o.instanceId(p.getInstanceId());
            if (p.getSecrets() != null) o.secrets(p.getSecrets());
            if (p.getCredential() != null) {
                ToolctxProperties.Credential c = p.getCredential();
                o.credential(c.getHeader(), c.getValues() == null ? List.of() : c.getValues());
            }
            if (p.getRequireContext() != null) o.requireContext(p.getRequireContext());
            if (p.getClockSkewSeconds() != null) o.clockSkewSeconds(p.getClockSkewSeconds());
            if (p.getMaxTokenAgeSeconds() != null) o.maxTokenAgeSeconds(p.getMaxTokenAgeSeconds());
            if (p.getMaxBodyBytes() != null) o.maxBodyBytes(p.getMaxBodyBytes());
            if (p.getMaxTokenBytes() != null) o.maxTokenBytes(p.getMaxTokenBytes());
            if (p.getProtocolMajors() != null) o.protocolMajors(p.getProtocolMajors());
            if (p.getForward() != null) o.forward(forward(p.getForward()));
        }
        if (p.getIncludeReason() != null) o.includeReason(p.getIncludeReason());
        if (store != null && p.getReplayCapacity() != null) {
            throw new ToolctxException("config_conflict", "toolctx.replay-capacity (in memory) and a replay store (Redis) are both set: choose one");
        }
        if (store != null) o.replayStore(store);
        else if (p.getReplayCapacity() != null) o.memoryReplayGuard(p.getReplayCapacity());
        return o;
    }

    /** The names of the core's own settings given as properties beside toolctx.core-config. */
    private static List<String> coreOptionsSet(ToolctxProperties p) {
        List<String> set = new ArrayList<>();
        if (p.getInstanceId() != null) set.add("instance-id");
        if (p.getSecrets() != null) set.add("secrets");
        if (p.getCredential() != null) set.add("credential");
        if (p.getRequireContext() != null) set.add("require-context");
        if (p.getClockSkewSeconds() != null) set.add("clock-skew-seconds");
        if (p.getMaxTokenAgeSeconds() != null) set.add("max-token-age-seconds");
        if (p.getMaxBodyBytes() != null) set.add("max-body-bytes");
        if (p.getMaxTokenBytes() != null) set.add("max-token-bytes");
        if (p.getProtocolMajors() != null) set.add("protocol-majors");
        if (p.getForward() != null) set.add("forward");
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

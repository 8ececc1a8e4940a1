package dev.toolctx.spring;

import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code toolctx.*}: one property per {@link dev.toolctx.VerifierOptions}
 * option, or the core's whole configuration JSON as {@code toolctx.core-config}.
 * Every property is null unless given: what is not given is left to the
 * core (its default, or its configuration error).
 *
 * @param coreConfig the core's configuration JSON as it is (CONTRACT §1 names); excludes the core's settings below
 * @param secrets the HMAC secrets, newest first
 * @param forward the core's {@code forward} setting as JSON: {@code {"tuix": true}}
 * @param includeReason refusals carry {@code data.reason}
 * @param replayCapacity the in-memory replay guard with this capacity (0: the core's default)
 * @param redisUrl the replay guard in Redis (Lettuce), shared with the other replicas and front ends
 */
@ConfigurationProperties("toolctx")
public record ToolctxProperties(
        String coreConfig,
        String instanceId,
        List<String> secrets,
        Credential credential,
        Boolean requireContext,
        Long clockSkewSeconds,
        Long maxTokenAgeSeconds,
        Long maxBodyBytes,
        Long maxTokenBytes,
        List<Integer> protocolMajors,
        String forward,
        Boolean includeReason,
        Integer replayCapacity,
        String redisUrl) {

    /** The static credential: the header and the values it may hold. */
    public record Credential(String header, List<String> values) {
        /** Never the values. */
        @Override
        public String toString() {
            return "Credential(header=" + header + ")";
        }
    }

    /** Never the secrets, the credential's values nor the Redis URL (it may hold a password). */
    @Override
    public String toString() {
        return "ToolctxProperties(instanceId=" + instanceId + ")";
    }
}

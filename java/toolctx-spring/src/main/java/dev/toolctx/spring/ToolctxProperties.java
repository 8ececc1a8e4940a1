package dev.toolctx.spring;

import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code toolctx.*}: one property per {@link dev.toolctx.VerifierOptions}
 * option, or the core's whole configuration JSON as {@code toolctx.core-config}.
 * Every property is unset (null) unless given: what is not given is left
 * to the core (its defaults, or its configuration error).
 */
@ConfigurationProperties("toolctx")
public class ToolctxProperties {
    /** The core's configuration JSON as it is (CONTRACT §1 names); excludes the core's own options below. */
    private String coreConfig;

    private String instanceId;
    /** The HMAC secrets, newest first. */
    private List<String> secrets;

    private Credential credential;
    private Boolean requireContext;
    private Long clockSkewSeconds;
    private Long maxTokenAgeSeconds;
    private Long maxBodyBytes;
    private Long maxTokenBytes;
    private List<Integer> protocolMajors;
    /** The core's {@code forward} setting as JSON: {@code {"tuix": true}}. */
    private String forward;

    /** Refusals carry {@code data.reason}. */
    private Boolean includeReason;
    /** The in-memory replay guard with this capacity (0: the core's default). */
    private Integer replayCapacity;
    /** The replay guard in Redis (Lettuce), shared with the other replicas and front ends. */
    private String redisUrl;

    /** The static credential: the header and the values it may hold. */
    public static class Credential {
        private String header;
        private List<String> values;

        public String getHeader() {
            return header;
        }

        public void setHeader(String header) {
            this.header = header;
        }

        public List<String> getValues() {
            return values;
        }

        public void setValues(List<String> values) {
            this.values = values;
        }
    }

    public String getCoreConfig() {
        return coreConfig;
    }

    public void setCoreConfig(String coreConfig) {
        this.coreConfig = coreConfig;
    }

    public String getInstanceId() {
        return instanceId;
    }

    public void setInstanceId(String instanceId) {
        this.instanceId = instanceId;
    }

    public List<String> getSecrets() {
        return secrets;
    }

    public void setSecrets(List<String> secrets) {
        this.secrets = secrets;
    }

    public Credential getCredential() {
        return credential;
    }

    public void setCredential(Credential credential) {
        this.credential = credential;
    }

    public Boolean getRequireContext() {
        return requireContext;
    }

    public void setRequireContext(Boolean requireContext) {
        this.requireContext = requireContext;
    }

    public Long getClockSkewSeconds() {
        return clockSkewSeconds;
    }

    public void setClockSkewSeconds(Long clockSkewSeconds) {
        this.clockSkewSeconds = clockSkewSeconds;
    }

    public Long getMaxTokenAgeSeconds() {
        return maxTokenAgeSeconds;
    }

    public void setMaxTokenAgeSeconds(Long maxTokenAgeSeconds) {
        this.maxTokenAgeSeconds = maxTokenAgeSeconds;
    }

    public Long getMaxBodyBytes() {
        return maxBodyBytes;
    }

    public void setMaxBodyBytes(Long maxBodyBytes) {
        this.maxBodyBytes = maxBodyBytes;
    }

    public Long getMaxTokenBytes() {
        return maxTokenBytes;
    }

    public void setMaxTokenBytes(Long maxTokenBytes) {
        this.maxTokenBytes = maxTokenBytes;
    }

    public List<Integer> getProtocolMajors() {
        return protocolMajors;
    }

    public void setProtocolMajors(List<Integer> protocolMajors) {
        this.protocolMajors = protocolMajors;
    }

    public String getForward() {
        return forward;
    }

    public void setForward(String forward) {
        this.forward = forward;
    }

    public Boolean getIncludeReason() {
        return includeReason;
    }

    public void setIncludeReason(Boolean includeReason) {
        this.includeReason = includeReason;
    }

    public Integer getReplayCapacity() {
        return replayCapacity;
    }

    public void setReplayCapacity(Integer replayCapacity) {
        this.replayCapacity = replayCapacity;
    }

    public String getRedisUrl() {
        return redisUrl;
    }

    public void setRedisUrl(String redisUrl) {
        this.redisUrl = redisUrl;
    }

    /** Never the secrets, the credential's values nor the Redis URL (it may hold a password). */
    @Override
    public String toString() {
        return "ToolctxProperties(instanceId=" + instanceId + ")";
    }
}

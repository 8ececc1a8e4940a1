package dev.toolctx;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/**
 * {@link Verifier#create}'s options: npm's {@code createVerifier} options,
 * held as the core's configuration JSON (CONTRACT §1, snake_case names).
 * Nothing is checked here: the core validates the configuration and
 * {@link Verifier#create} throws its error.
 */
public final class VerifierOptions {
    /**
     * Numbers of any length: the core bounded the token already, and a
     * context's metadata holds the numbers its token had (Jackson's default
     * stops at 1,000 digits).
     */
    static final ObjectMapper JSON = new ObjectMapper(com.fasterxml.jackson.core.JsonFactory.builder()
            .streamReadConstraints(com.fasterxml.jackson.core.StreamReadConstraints.builder().maxNumberLength(Integer.MAX_VALUE).build())
            .build());

    /** The builder's configuration, or null: {@link #fromCoreConfig}'s text, not read yet. */
    private ObjectNode config;
    /** The configuration as the user wrote it, handed to the core unchanged; or null: {@link #config}. */
    private String text;
    /** Null: not given (the core's default). */
    Boolean includeReason;
    /** The in-memory guard's capacity as given (the core reads it), or null: no in-memory guard. */
    Long replayCapacity;
    ReplayStore replayStore;

    private VerifierOptions(ObjectNode config, String text) {
        this.config = config;
        this.text = text;
    }

    public static VerifierOptions builder() {
        return new VerifierOptions(JSON.createObjectNode(), null);
    }

    /**
     * Options from the core's configuration JSON as it is (the names of
     * CONTRACT §1 and the vector files: {@code instance_id}, {@code secrets},
     * ...), handed to the core as written: {@link Verifier#create} throws
     * its error (not JSON, not an object, a duplicate member, ...). A setter
     * below changes it as the JSON object it reads (a text that is none is
     * left to the core).
     */
    public static VerifierOptions fromCoreConfig(String json) {
        return new VerifierOptions(null, json);
    }

    /** The configuration the core reads. */
    String configText() {
        return text != null ? text : config.toString();
    }

    /** The object a setter changes: {@link #fromCoreConfig}'s text read on first use. */
    private ObjectNode config() {
        if (config != null) return config;
        try {
            if (JSON.reader().with(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY).readTree(text) instanceof ObjectNode o) {
                config = o;
                text = null;
                return o;
            }
        } catch (java.io.IOException e) {
            // Not a JSON object: the core refuses the text as it is.
        }
        return JSON.createObjectNode();
    }

    public VerifierOptions instanceId(String id) {
        config().put("instance_id", id);
        return this;
    }

    /** The HMAC secrets, newest first; each at least 32 bytes. */
    public VerifierOptions secrets(List<String> secrets) {
        ArrayNode a = config().putArray("secrets");
        secrets.forEach(a::add);
        return this;
    }

    /** The static credential: the header and the values it may hold. */
    public VerifierOptions credential(String header, List<String> values) {
        ObjectNode c = config().putObject("credential");
        c.put("header", header);
        ArrayNode a = c.putArray("values");
        values.forEach(a::add);
        return this;
    }

    public VerifierOptions requireContext(boolean require) {
        config().put("require_context", require);
        return this;
    }

    public VerifierOptions clockSkewSeconds(long s) {
        config().put("clock_skew_s", s);
        return this;
    }

    public VerifierOptions maxTokenAgeSeconds(long s) {
        config().put("max_token_age_s", s);
        return this;
    }

    public VerifierOptions maxBodyBytes(long n) {
        config().put("max_body_bytes", n);
        return this;
    }

    public VerifierOptions maxTokenBytes(long n) {
        config().put("max_token_bytes", n);
        return this;
    }

    public VerifierOptions protocolMajors(List<Integer> majors) {
        ArrayNode a = config().putArray("protocol_majors");
        majors.forEach(a::add);
        return this;
    }

    /** What goes upstream: {@code {"headers": {"task_id": "x-toolctx-task-id"}, "tuix": true}}. */
    public VerifierOptions forward(Map<String, ?> forward) {
        config().set("forward", JSON.valueToTree(forward));
        return this;
    }

    /** Refusals carry {@code data.reason} (default: the core's, docs/CONTRACT.md "Settings"). */
    public VerifierOptions includeReason(boolean include) {
        this.includeReason = include;
        return this;
    }

    /**
     * The in-memory replay guard: the core's bounded cache, for a server
     * with one process. {@code capacity} 0 is the core's default; the core
     * refuses one outside the range of {@code replay_capacity} in its
     * settings table (docs/CONTRACT.md §5.3) with
     * {@code limit_out_of_range} when the verifier is created.
     */
    public VerifierOptions memoryReplayGuard(long capacity) {
        this.replayStore = null;
        this.replayCapacity = capacity;
        return this;
    }

    /** {@link #memoryReplayGuard(long)}, kept for callers compiled against it. */
    public VerifierOptions memoryReplayGuard(int capacity) {
        return memoryReplayGuard((long) capacity);
    }

    /** A replay store shared by the replicas ({@link RedisReplayStore}). */
    public VerifierOptions replayStore(ReplayStore store) {
        this.replayCapacity = null;
        this.replayStore = store;
        return this;
    }
}

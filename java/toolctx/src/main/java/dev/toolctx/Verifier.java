package dev.toolctx;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.toolctx.internal.ConfigureFlags;
import dev.toolctx.internal.CoreInstance;
import dev.toolctx.internal.CoreRuntime;
import dev.toolctx.internal.Fields;
import dev.toolctx.internal.Heads;
import dev.toolctx.internal.Pool;
import dev.toolctx.internal.Trap;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;

/**
 * The AgentArea verifier (npm's {@code createVerifier}): the core decides
 * every request, in its native library through FFM on Java 22+ or in its
 * wasm module compiled to JVM bytecode ({@link #runtime}). Create one per
 * configuration with {@link #create} and share it between threads: each
 * call takes an instance of the core from a pool (an instance is
 * single-threaded). An instance that traps (or panics) is dropped and the
 * request is refused with the core's {@code internal_error} refusal.
 *
 * <p>With the in-memory replay guard every call runs on one instance (its
 * cache is the guard), one call at a time; several replicas or many cores
 * want a shared store ({@link RedisReplayStore}).
 */
public final class Verifier {
    /** Idle instances kept per verifier: about one per thread that calls at once. */
    private static final int IDLE = 64;

    /** Unconfigured instances, for what the core says without a configuration. */
    private static final Pool<CoreInstance> PLAIN = new Pool<>(CoreRuntime::verifier, 4);

    private final Pool<CoreInstance> pool;
    private final ReplayStore store;
    private final int maxBodyBytes;
    private final int maxTokenBytes;
    private final List<String> removed;
    private final Verdict pass;
    private final String describe;
    /** The in-memory guard's one instance, or null. */
    private final CoreInstance only;
    private boolean broken;

    private Verifier(VerifierOptions options) {
        byte[] config = Fields.utf8(options.configText());
        // The flags' bits are the module's (ConfigureFlags); include_reason
        // as given, or, not given, the core's default.
        Boolean reason = options.includeReason;
        int flags = (reason == null ? 0 : ConfigureFlags.bit("include_reason_given")
                        | (reason ? ConfigureFlags.bit("include_reason") : 0))
                | (options.replayStore != null ? ConfigureFlags.bit("shared_store") : 0);
        boolean memory = options.replayCapacity != null;
        this.store = options.replayStore;
        // Check the configuration once, on the first instance, and keep what
        // it says; the core reads the capacity as given and may refuse it.
        CoreInstance first = CoreRuntime.verifier();
        List<byte[]> said = configure(first, config, flags | (memory ? ConfigureFlags.bit("memory_guard") : 0), memory ? options.replayCapacity : 0);
        this.maxBodyBytes = Integer.parseInt(Fields.text(said.get(0)));
        List<String> names = new ArrayList<>();
        for (byte[] n : said.subList(2, said.size())) names.add(Fields.text(n));
        this.removed = Collections.unmodifiableList(names);
        this.pass = new Verdict(Verdict.Outcome.PASS, null, null, removed, List.of());
        this.maxTokenBytes = Integer.parseInt(Fields.text(said.get(1)));
        this.describe = Fields.text(text(first.call("toolctx_describe", new byte[0][])));
        // Refusal-only instances of the in-memory guard's verifier hold no cache.
        this.pool = new Pool<>(() -> {
            CoreInstance w = CoreRuntime.verifier();
            configure(w, config, flags, 0);
            return w;
        }, IDLE);
        this.only = memory ? first : null;
    }

    /** A verifier for {@code options}; throws the core's configuration error. */
    public static Verifier create(VerifierOptions options) {
        return new Verifier(options);
    }

    private static List<byte[]> configure(CoreInstance w, byte[] config, int flags, long capacity) {
        return Fields.decode(text(w.call("toolctx_configure", new byte[][] {config}, flags, capacity)), 0);
    }

    /** The answer's payload after {@code =}; {@code !code\nmessage} is thrown. */
    static byte[] text(byte[] answer) {
        if (answer.length > 0 && answer[0] == '=') return java.util.Arrays.copyOfRange(answer, 1, answer.length);
        String err = answer.length > 0 ? Fields.text(java.util.Arrays.copyOfRange(answer, 1, answer.length)) : "internal\nempty answer";
        int nl = err.indexOf('\n');
        throw new ToolctxException(nl < 0 ? "internal" : err.substring(0, nl), nl < 0 ? err : err.substring(nl + 1));
    }

    /**
     * The runtime the core runs on in this process: {@code native} (its
     * native library through FFM, Java 22+ on a platform the jar carries a
     * library for) or {@code chicory} (its wasm module compiled to JVM
     * bytecode). The system property {@code toolctx.runtime} forces one.
     */
    public static String runtime() {
        return CoreRuntime.name();
    }

    /** The core's in-memory replay capacity unless told otherwise. */
    public static int defaultReplayCapacity() {
        return Integer.parseInt(replayDefaults().get(1));
    }

    /** The core's replay defaults: Redis key prefix, in-memory capacity, store timeout in ms. */
    static List<String> replayDefaults() {
        List<byte[]> d = PLAIN.with(w -> Fields.decode(text(w.call("toolctx_replay_defaults", new byte[0][])), 0));
        List<String> out = new ArrayList<>();
        for (byte[] b : d) out.add(Fields.text(b));
        return out;
    }

    /**
     * The core's store timeout rule over a Redis store's wait for a reply,
     * in ms: 0 is its default (500); anything else must be 1 to 60,000, or
     * this throws {@code limit_out_of_range}.
     */
    static long redisTimeoutMs(long raw) {
        byte[] ms = PLAIN.with(w -> text(w.call("toolctx_redis_timeout", new byte[0][], Double.doubleToRawLongBits(raw))));
        return Long.parseLong(Fields.text(ms));
    }

    /** Runs an operation of the core without a configuration. */
    static <R> R plain(Function<CoreInstance, R> op) {
        return PLAIN.with(op);
    }

    /** Read at most this many body bytes; one more is enough to refuse {@code body_too_large}. */
    public int maxBodyBytes() {
        return maxBodyBytes;
    }

    /**
     * The core's {@code max_token_bytes} for this configuration: a larger
     * token is refused {@code token_too_large}, provided the HTTP server's
     * request-head limit lets it reach the filter (size the container's
     * limit from it: toolctx-spring does).
     */
    public int maxTokenBytes() {
        return maxTokenBytes;
    }

    /** The lower-case header names removed upstream from every request that passes or is accepted. */
    public List<String> removedHeaders() {
        return removed;
    }

    /**
     * Steps 0 and 1 (method, static credential) on the headers alone:
     * {@code PASS}, {@code REJECT}, or {@code READ_BODY} (then read the body
     * and call {@link #verify}).
     */
    public Verdict checkHeaders(String method, List<Header> headers) {
        byte[][] in = Heads.encode(method, headers, null);
        return run(w -> decode(w.call("toolctx_check_headers", in), w, 0));
    }

    /** The whole decision on one request at {@code now} (Unix seconds), replay guard included. */
    public Verdict verify(String method, List<Header> headers, byte[] body, long now) {
        if (now < 0) throw new ToolctxException("invalid_argument", "now must be a non-negative integer (Unix seconds)");
        byte[][] in = Heads.encode(method, headers, body);
        return run(w -> decode(w.call("toolctx_verify", in, now), w, now));
    }

    private Verdict run(Function<CoreInstance, Verdict> op) {
        try {
            if (only == null) return pool.with(op);
            synchronized (this) {
                // After a trap the in-memory guard's cache is gone: refuse from then on.
                if (broken) return internalError();
                try {
                    return op.apply(only);
                } catch (Trap t) {
                    broken = true;
                    throw t;
                }
            }
        } catch (Trap t) {
            return internalError();
        }
    }

    /** The core's {@code internal_error} refusal, asked of another instance. */
    private Verdict internalError() {
        return pool.with(w -> decode(w.call("toolctx_refusal", new byte[][] {Fields.utf8("internal_error")}), w, 0));
    }

    /** Reads the module's tagged verdict; a claim is asked of the store and settled on the same instance. */
    private Verdict decode(byte[] answer, CoreInstance w, long now) {
        String out = Fields.text(text(answer));
        if (out.isEmpty()) throw new ToolctxException("internal", "empty verdict from the core");
        switch (out.charAt(0)) {
            case 'p':
                return pass;
            case 'b':
                return new Verdict(Verdict.Outcome.READ_BODY, null, null, removed, List.of());
            case 'a':
                return accept(out);
            case 'r':
                return reject(out.substring(1));
            case 'c':
                return claim(out, w, now);
            default:
                throw new ToolctxException("internal", "unexpected verdict from the core");
        }
    }

    private Verdict claim(String out, CoreInstance w, long now) {
        if (store == null) throw new ToolctxException("internal", "a claim without a replay store");
        int nl = out.indexOf('\n');
        int nl2 = out.indexOf('\n', nl + 1);
        long ticket = Long.parseLong(out.substring(1, nl));
        long until = Long.parseLong(out.substring(nl + 1, nl2));
        String jti = out.substring(nl2 + 1);
        String answer;
        try {
            answer = store.firstUse(jti, until, now);
        } catch (Exception e) {
            answer = "failed";
        }
        if (answer == null) answer = "failed";
        return decode(w.call("toolctx_settle", new byte[][] {Fields.utf8(answer)}, (int) ticket), w, now);
    }

    private Verdict accept(String out) {
        int nl = out.indexOf('\n');
        String context = nl < 0 ? out.substring(1) : out.substring(1, nl);
        List<Header> set = new ArrayList<>();
        if (nl >= 0) {
            // After the id line: name and value, in turn.
            String[] lines = out.substring(nl + 1).split("\n", -1);
            for (int i = 1; i + 1 < lines.length; i += 2) set.add(new Header(lines[i], lines[i + 1]));
        }
        try {
            ObjectNode json = (ObjectNode) VerifierOptions.JSON.readTree(context);
            return new Verdict(Verdict.Outcome.ACCEPT, new ToolContext(context, json), null, removed, List.copyOf(set));
        } catch (Exception e) {
            throw new ToolctxException("internal", "the core's context is not a JSON object");
        }
    }

    static Verdict reject(String refusal) {
        try {
            JsonNode r = VerifierOptions.JSON.readTree(refusal);
            JsonNode id = r.has("id") ? r.get("id") : NullNode.getInstance();
            Refusal it = new Refusal(r.path("status").asInt(), r.path("code").asLong(), r.path("reason").asText(), r.path("message").asText(), id, r.path("body").asText());
            return new Verdict(Verdict.Outcome.REJECT, null, it, List.of(), List.of());
        } catch (Exception e) {
            throw new ToolctxException("internal", "the core's refusal is not JSON");
        }
    }

    /** The configuration with secrets and credential values redacted. */
    @Override
    public String toString() {
        return describe;
    }
}

package dev.toolctx;

import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.util.Map;
import java.util.UUID;
import java.util.function.BiFunction;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A tool that is not safe to run twice (npm's {@code idempotent}): the
 * platform's retry of a call (same idempotency key and arguments) gets the
 * first result back, marked replayed, and the tool does not run again; the
 * same key with other arguments, a call still running past the wait, or a
 * call without a verified context is refused. Every rule is the core's
 * (CONTRACT §5.1): the key, the argument hash, the entries, the decision,
 * the wait and the refusals.
 */
public final class Idempotent {
    private final IdempotencyStore store;
    private final long ttlMs;
    private final long leaseMs;
    private final long waitMs;
    private final String namespace;
    private final boolean allowUnverified;
    private final LongSupplier clock;
    private final McpJsonMapper mapper;

    private Idempotent(Builder b) {
        this.store = b.store != null ? b.store : MemoryIdempotencyStore.create();
        // The core's settings table: 0 (not given) its default, out of range refused.
        this.ttlMs = Settings.number("idempotency_ttl_ms", b.ttlMs);
        this.leaseMs = Settings.number("idempotency_lease_ms", b.leaseMs);
        this.waitMs = Settings.number("idempotency_wait_ms", b.waitMs);
        this.namespace = b.namespace;
        this.allowUnverified = b.allowUnverified;
        this.clock = System::currentTimeMillis;
        this.mapper = McpJsonDefaults.getMapper();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Options; unset ones are the core's defaults. */
    public static final class Builder {
        private IdempotencyStore store;
        private long ttlMs;
        private long leaseMs;
        private long waitMs;
        private String namespace = "";
        private boolean allowUnverified;

        public Builder store(IdempotencyStore store) {
            this.store = store;
            return this;
        }

        public Builder ttlMs(long ms) {
            this.ttlMs = ms;
            return this;
        }

        public Builder leaseMs(long ms) {
            this.leaseMs = ms;
            return this;
        }

        public Builder waitMs(long ms) {
            this.waitMs = ms;
            return this;
        }

        public Builder namespace(String namespace) {
            this.namespace = namespace;
            return this;
        }

        /** Run calls without a verified context unguarded (default: refuse them). */
        public Builder allowUnverified(boolean allow) {
            this.allowUnverified = allow;
            return this;
        }

        public Idempotent build() {
            return new Idempotent(this);
        }
    }

    /** A session server's tool handler, guarded. */
    public BiFunction<McpSyncServerExchange, CallToolRequest, CallToolResult> wrap(
            BiFunction<McpSyncServerExchange, CallToolRequest, CallToolResult> handler) {
        return (exchange, request) -> guard(exchange.transportContext(), request.arguments(), CallToolResult.class, () -> handler.apply(exchange, request));
    }

    /** A stateless server's tool handler, guarded. */
    public BiFunction<McpTransportContext, CallToolRequest, CallToolResult> wrapStateless(
            BiFunction<McpTransportContext, CallToolRequest, CallToolResult> handler) {
        return (transport, request) -> guard(transport, request.arguments(), CallToolResult.class, () -> handler.apply(transport, request));
    }

    /** The core's JSON (a replay written for the call's revision, or a refusal) as the SDK's result type. */
    private <R> R result(Class<R> type, String json) {
        try {
            return mapper.readValue(json, type);
        } catch (Exception e) {
            throw new ToolctxException("internal", "idempotent: a stored result is not a CallToolResult");
        }
    }

    private <R> R refuse(Class<R> type, String outcome, String key) {
        return result(type, HelpersCore.text("toolctx_idem_refusal", outcome, key));
    }

    /**
     * The call's protocol revision: its {@code MCP-Protocol-Version} header,
     * as {@link ToolctxContextExtractor} copied it, or "" when it has none;
     * the core writes a replay for it.
     */
    private static String revision(McpTransportContext transport) {
        Object revision = transport == null ? null : transport.get(ToolContext.REVISION);
        return revision instanceof String s ? s : "";
    }

    /**
     * One call guarded, whatever the SDK's result class {@code type}
     * (java-sdk's 2025-era {@code CallToolResult}, or its 2026-07-28 one:
     * {@link ModernIdempotent}): the result goes to the core as JSON, and
     * what the core answers comes back as {@code type}.
     */
    <R> R guard(McpTransportContext transport, Map<String, Object> arguments, Class<R> type, Supplier<R> tool) {
        ToolContext context = ToolContext.find(transport).orElse(null);
        if (context == null) return allowUnverified ? tool.get() : refuse(type, "unverified", "");
        String key = HelpersCore.text("toolctx_idem_store_key", namespace, context.idempotencyKey());
        String hash;
        try {
            Map<String, Object> args = arguments == null ? Map.of() : arguments;
            hash = HelpersCore.text("toolctx_idem_argument_hash", mapper.writeValueAsString(args));
        } catch (java.io.IOException e) {
            throw new ToolctxException("internal", "idempotent: the arguments are not JSON");
        }
        String mine = HelpersCore.text("toolctx_idem_running", hash, UUID.randomUUID().toString());
        long start = clock.getAsLong();
        for (int round = 0; ; round++) {
            String held;
            try {
                held = store.claim(key, mine, leaseMs);
            } catch (Exception e) {
                throw new ToolctxException("idempotency_store_failed", "idempotent: the store failed, the tool did not run", e);
            }
            if (held == null) break;
            String answer = HelpersCore.text("toolctx_idem_held", held, hash, revision(transport));
            if (answer.startsWith("c")) return refuse(type, "conflict", context.idempotencyKey());
            if (answer.startsWith("r")) return result(type, answer.substring(1));
            long pause = HelpersCore.waitMs(clock.getAsLong() - start, waitMs, round);
            if (pause < 0) return refuse(type, "in_progress", context.idempotencyKey());
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return refuse(type, "in_progress", context.idempotencyKey());
            }
        }
        R out;
        try {
            out = tool.get();
        } catch (RuntimeException e) {
            quietly(() -> store.release(key, mine));
            throw e;
        }
        quietly(() -> {
            String done = HelpersCore.text("toolctx_idem_done", hash, mapper.writeValueAsString(out));
            store.complete(key, done, ttlMs);
        });
        return out;
    }

    private interface Step {
        void run() throws Exception;
    }

    /** After the tool ran, a store failure is reported, never thrown: the result stands. */
    private static void quietly(Step step) {
        try {
            step.run();
        } catch (Exception e) {
            System.err.println("toolctx: the idempotency store failed after the tool ran: " + e.getMessage());
        }
    }
}

package dev.toolctx;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * The platform's limits on a tool result (CONTRACT §5; npm's
 * {@code checkResult}/{@code withLimits}): text over the limit is
 * offloaded, {@code structuredContent} over its limit dropped, images of
 * other types or too large or too many are not kept. The platform applies
 * them silently; these helpers say so while you develop. The limits, how
 * each is measured, the findings and the refusals are the core's (the
 * helpers module); nothing is measured here.
 */
public final class ResultLimits {
    private ResultLimits() {}

    /** The default hook: each finding as a warning on the {@code dev.toolctx} logger. */
    public static final Consumer<LimitFinding> WARN =
            f -> System.getLogger("dev.toolctx").log(System.Logger.Level.WARNING, "toolctx: " + f.message());

    /**
     * The core's limits as its JSON: {@code textChars}, {@code structuredChars},
     * {@code imageBytes}, {@code images}, {@code imageTypes}, {@code codes},
     * {@code progressIntervalMs}.
     */
    public static JsonNode limits() {
        return HelpersCore.resultLimits().deepCopy();
    }

    /**
     * The limits a {@code tools/call} result (as JSON) runs into, in the
     * core's order; empty when it is within all of them. A result the core
     * cannot read throws {@link ToolctxException} with the core's code
     * ({@code result_not_json}, {@code result_shape}).
     */
    public static List<LimitFinding> checkResult(String resultJson) {
        return checkResult(resultJson.getBytes(StandardCharsets.UTF_8));
    }

    /** As {@link #checkResult(String)}, on the JSON's bytes. */
    public static List<LimitFinding> checkResult(byte[] resultJson) {
        JsonNode found;
        try {
            found = VerifierOptions.JSON.readTree(HelpersCore.text("toolctx_check_result", resultJson));
        } catch (java.io.IOException e) {
            throw new ToolctxException("internal", "checkResult: the core's findings are not JSON");
        }
        List<LimitFinding> out = new ArrayList<>();
        for (JsonNode f : found) {
            JsonNode index = f.get("index");
            out.add(new LimitFinding(f.path("code").asText(), f.path("message").asText(), f.path("size").asLong(),
                    f.path("limit").asLong(), index == null ? OptionalInt.empty() : OptionalInt.of(index.asInt())));
        }
        return List.copyOf(out);
    }

    /** As {@link #checkResult(String)}, on a java-sdk result (written by java-sdk's JSON mapper). */
    public static List<LimitFinding> checkResult(CallToolResult result) {
        String json;
        try {
            json = McpJsonDefaults.getMapper().writeValueAsString(result);
        } catch (java.io.IOException e) {
            throw new ToolctxException("invalid_argument", "checkResult: the result is not JSON");
        }
        return checkResult(json);
    }

    /** Hands each finding of {@code result} to {@code onLimit}; returns {@code result} unchanged. */
    public static CallToolResult checked(CallToolResult result, Consumer<LimitFinding> onLimit) {
        for (LimitFinding f : checkResult(result)) onLimit.accept(f);
        return result;
    }

    /** A session server's tool handler whose every result is checked ({@link #WARN}). */
    public static BiFunction<McpSyncServerExchange, CallToolRequest, CallToolResult> wrap(
            BiFunction<McpSyncServerExchange, CallToolRequest, CallToolResult> handler) {
        return wrap(handler, WARN);
    }

    /** As {@link #wrap(BiFunction)}; throw from {@code onLimit} to make a test fail on any limit. */
    public static BiFunction<McpSyncServerExchange, CallToolRequest, CallToolResult> wrap(
            BiFunction<McpSyncServerExchange, CallToolRequest, CallToolResult> handler, Consumer<LimitFinding> onLimit) {
        return checking(handler, onLimit);
    }

    /** A stateless server's tool handler whose every result is checked ({@link #WARN}). */
    public static BiFunction<McpTransportContext, CallToolRequest, CallToolResult> wrapStateless(
            BiFunction<McpTransportContext, CallToolRequest, CallToolResult> handler) {
        return wrapStateless(handler, WARN);
    }

    /** As {@link #wrapStateless(BiFunction)}, with your hook. */
    public static BiFunction<McpTransportContext, CallToolRequest, CallToolResult> wrapStateless(
            BiFunction<McpTransportContext, CallToolRequest, CallToolResult> handler, Consumer<LimitFinding> onLimit) {
        return checking(handler, onLimit);
    }

    /** Either server's handler (its first argument is the exchange or the transport context), checked. */
    private static <X> BiFunction<X, CallToolRequest, CallToolResult> checking(
            BiFunction<X, CallToolRequest, CallToolResult> handler, Consumer<LimitFinding> onLimit) {
        return (x, request) -> checked(handler.apply(x, request), onLimit);
    }
}

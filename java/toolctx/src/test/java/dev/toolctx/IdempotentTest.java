package dev.toolctx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/** The idempotency guard on the core's helper rules, with the in-memory store. */
class IdempotentTest {
    static McpTransportContext verified() {
        ToolContext ctx = VerifierTest.verify(Verifier.create(VerifierTest.options()), VerifierTest.VALID.get("cases").get(0))
                .context().orElseThrow();
        return McpTransportContext.create(Map.of(ToolContext.ATTRIBUTE, ctx, ToolContext.JUDGED, "ACCEPT"));
    }

    static CallToolRequest call(int amount) {
        return new CallToolRequest("create_invoice", Map.of("amount", amount));
    }

    @Test
    void aRetryIsReplayedOtherArgumentsConflictAndUnverifiedIsRefused() {
        AtomicInteger runs = new AtomicInteger();
        BiFunction<McpTransportContext, CallToolRequest, CallToolResult> tool = Idempotent.builder().build().wrapStateless((t, r) -> {
            runs.incrementAndGet();
            return CallToolResult.builder().content(List.of(new McpSchema.TextContent("invoice " + r.arguments().get("amount")))).build();
        });
        McpTransportContext ctx = verified();
        CallToolResult first = tool.apply(ctx, call(42));
        CallToolResult retry = tool.apply(ctx, call(42));
        assertEquals(1, runs.get(), "the retry did not run the tool");
        assertEquals(((McpSchema.TextContent) first.content().get(0)).text(), ((McpSchema.TextContent) retry.content().get(0)).text());
        assertTrue(retry.meta() != null && Boolean.TRUE.equals(retry.meta().get(HelpersCore.defaults().path("replayed").asText())),
                "marked replayed: " + retry.meta());
        CallToolResult conflict = tool.apply(ctx, call(43));
        assertEquals(1, runs.get());
        assertTrue(Boolean.TRUE.equals(conflict.isError()), "conflict is an error result");
        CallToolResult unverified = tool.apply(McpTransportContext.EMPTY, call(42));
        assertEquals(1, runs.get());
        assertTrue(Boolean.TRUE.equals(unverified.isError()));
        assertFalse(((McpSchema.TextContent) unverified.content().get(0)).text().isEmpty());
    }
}

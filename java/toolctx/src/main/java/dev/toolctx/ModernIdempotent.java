package dev.toolctx;

import io.modelcontextprotocol.modern.McpSchema.CallToolRequest;
import io.modelcontextprotocol.modern.McpSchema.CallToolResult;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpSyncResponse;
import io.modelcontextprotocol.modern.server.feature.McpSyncTool;
import java.util.function.BiFunction;

/**
 * {@link Idempotent} for java-sdk's 2026-07-28 server
 * ({@code io.modelcontextprotocol.modern}, java-sdk 2.2+): the same guard,
 * the same store and the same rules as its 2025-era wrappers, over the
 * modern {@code CallToolResult}. The call's protocol revision is the one
 * {@link ToolctxContextExtractor} put in the transport context (give it to
 * {@code HttpServletMcpTransport}'s builder); a retry answered first at
 * another revision comes back as the core wrote it for this one. A class of
 * its own so that an application on an older java-sdk (Spring AI 2.0's
 * 2.0.0) never loads the modern classes.
 */
public final class ModernIdempotent {
    private ModernIdempotent() {}

    /** A modern server's tool handler, guarded by {@code guard}. */
    public static McpSyncTool.Handler wrap(Idempotent guard, BiFunction<McpRequestContext, CallToolRequest, CallToolResult> handler) {
        return (ctx, request) -> McpSyncResponse.result(
                guard.guard(ctx.transportContext(), request.arguments(), CallToolResult.class, () -> handler.apply(ctx, request)));
    }
}

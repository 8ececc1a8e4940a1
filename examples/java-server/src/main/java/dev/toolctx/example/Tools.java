package dev.toolctx.example;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.toolctx.ToolContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.util.List;
import java.util.Map;

/** The Node example's tools (examples/node-server/common.mjs). */
final class Tools {
    private Tools() {}

    static List<SyncToolSpecification> all(McpJsonMapper mapper, Recorder record) {
        return List.of(
                JavaServer.tool(mapper, record, "get_order", "Looks up an order; says which task asked for it",
                        "{\"type\":\"object\",\"properties\":{\"orderId\":{\"type\":\"string\"}},\"required\":[\"orderId\"]}",
                        (exchange, request) -> {
                            ToolContext ctx = JavaServer.contextOf(exchange);
                            String who = ctx == null
                                    ? "no verified context"
                                    : "task " + ctx.taskId() + ctx.endUserId().map(u -> " for " + u).orElse("");
                            Object orderId = request.arguments() == null ? null : request.arguments().get("orderId");
                            return text("order " + orderId + ": 2 items, shipped (" + who + ")");
                        }),
                JavaServer.tool(mapper, record, "export_report", "Exports a report page by page, reporting progress",
                        "{\"type\":\"object\",\"properties\":{\"pages\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":20,\"default\":3}}}",
                        (exchange, request) -> {
                            Object p = request.arguments() == null ? null : request.arguments().get("pages");
                            int pages = p instanceof Number ? ((Number) p).intValue() : 3;
                            Object token = request.progressToken();
                            for (int page = 1; page <= pages; page++) {
                                sleep(550);
                                if (token != null) {
                                    exchange.progressNotification(new McpSchema.ProgressNotification(
                                            token, (double) page, (double) pages, "page " + page + " of " + pages, null));
                                }
                            }
                            return text("exported " + pages + " pages");
                        }),
                JavaServer.tool(mapper, record, "whoami", "What this server saw: the verified context and the x-toolctx-* headers a proxy added",
                        "{\"type\":\"object\",\"properties\":{}}",
                        (exchange, request) -> {
                            ToolContext ctx = JavaServer.contextOf(exchange);
                            ObjectNode saw = JavaServer.object();
                            saw.put("verified_here", exchange.transportContext().get(ToolContext.JUDGED) != null);
                            if (ctx == null) saw.putNull("context");
                            else saw.set("context", ctx.json());
                            ObjectNode forwarded = saw.putObject("proxy_headers");
                            for (String[] h : JavaServer.headersOf(exchange)) {
                                if (h[0].startsWith("x-toolctx-")) forwarded.put(h[0], h[1]);
                            }
                            return structured(saw);
                        }),
                JavaServer.tool(mapper, record, "toolctx_probe", "Counts its own runs (toolctx conformance probe)",
                        "{\"type\":\"object\",\"properties\":{}}",
                        (exchange, request) -> {
                            ObjectNode out = JavaServer.object();
                            out.put("runs", JavaServer.PROBE_RUNS.incrementAndGet());
                            return structured(out);
                        }));
    }

    static CallToolResult text(String text) {
        return CallToolResult.builder().content(List.of(new McpSchema.TextContent(text))).build();
    }

    @SuppressWarnings("unchecked")
    static CallToolResult structured(ObjectNode out) {
        Map<String, Object> value = JavaServer.JSON.convertValue(out, Map.class);
        return CallToolResult.builder()
                .content(List.of(new McpSchema.TextContent(out.toString())))
                .structuredContent(value)
                .build();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("cancelled");
        }
    }
}

package dev.toolctx.example;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.toolctx.Idempotent;
import dev.toolctx.ToolContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.util.List;
import java.util.Map;

/** The Node example's tools (examples/node-server/common.mjs). */
final class Tools {
    private Tools() {}

    /** Sends one progress report, when the transport can (a session's, not a stateless one's). */
    interface Progress {
        void report(McpSchema.ProgressNotification notification);
    }

    /** A tool's logic, on either transport: the transport context, the request, progress. */
    interface Handler {
        CallToolResult call(McpTransportContext transport, CallToolRequest request, Progress progress);
    }

    /** {@code recordsItself}: its run line is written inside the idempotency guard (a replayed retry runs nothing). */
    record Tool(McpSchema.Tool tool, Handler handler, boolean recordsItself) {}

    static Tool tool(McpJsonMapper mapper, String name, String description, String schema, Handler handler) {
        return new Tool(McpSchema.Tool.builder().name(name).description(description).inputSchema(mapper, schema).build(), handler, false);
    }

    /** create_invoice: not safe to run twice, so a retry gets the first result back ({@link Idempotent}). */
    static Tool createInvoice(McpJsonMapper mapper, Recorder record, Idempotent guard) {
        var guarded = guard.wrapStateless((transport, request) -> {
            if (record != null) record.run("create_invoice", transport);
            ToolContext ctx = JavaServer.contextOf(transport);
            ObjectNode out = JavaServer.object();
            out.put("invoice", "inv-" + (ctx == null ? "" : ctx.idempotencyKey()));
            Object amount = request.arguments() == null ? null : request.arguments().get("amount");
            out.put("amount", amount instanceof Number ? ((Number) amount).longValue() : 0);
            return structured(out);
        });
        Tool t = tool(mapper, "create_invoice", "Not safe to run twice: a retry gets the first result back",
                "{\"type\":\"object\",\"properties\":{\"amount\":{\"type\":\"integer\"}},\"required\":[\"amount\"]}",
                (transport, request, progress) -> guarded.apply(transport, request));
        return new Tool(t.tool(), t.handler(), true);
    }

    static List<Tool> all(McpJsonMapper mapper, Recorder record, Idempotent invoices) {
        return List.of(
                createInvoice(mapper, record, invoices),
                tool(mapper, "get_order", "Looks up an order; says which task asked for it",
                        "{\"type\":\"object\",\"properties\":{\"orderId\":{\"type\":\"string\"}},\"required\":[\"orderId\"]}",
                        (transport, request, progress) -> {
                            ToolContext ctx = JavaServer.contextOf(transport);
                            String who = ctx == null
                                    ? "no verified context"
                                    : "task " + ctx.taskId() + ctx.endUserId().map(u -> " for " + u).orElse("");
                            Object orderId = request.arguments() == null ? null : request.arguments().get("orderId");
                            return text("order " + orderId + ": 2 items, shipped (" + who + ")");
                        }),
                tool(mapper, "export_report", "Exports a report page by page, reporting progress",
                        "{\"type\":\"object\",\"properties\":{\"pages\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":20,\"default\":3}}}",
                        (transport, request, progress) -> {
                            Object p = request.arguments() == null ? null : request.arguments().get("pages");
                            int pages = p instanceof Number ? ((Number) p).intValue() : 3;
                            // At the platform's relay rate (the core's coalescing); the held report goes on close.
                            try (dev.toolctx.Progress report = dev.toolctx.Progress.of(request.progressToken(), progress::report)) {
                                for (int page = 1; page <= pages; page++) {
                                    sleep(550);
                                    report.report(page, (double) pages, "page " + page + " of " + pages);
                                }
                            }
                            return text("exported " + pages + " pages");
                        }),
                tool(mapper, "whoami", "What this server saw: the verified context and the x-toolctx-* headers a proxy added",
                        "{\"type\":\"object\",\"properties\":{}}",
                        (transport, request, progress) -> {
                            ToolContext ctx = JavaServer.contextOf(transport);
                            ObjectNode saw = JavaServer.object();
                            saw.put("verified_here", transport.get(ToolContext.JUDGED) != null);
                            if (ctx == null) saw.putNull("context");
                            else saw.set("context", ctx.json());
                            ObjectNode forwarded = saw.putObject("proxy_headers");
                            for (String[] h : JavaServer.headersOf(transport)) {
                                if (h[0].startsWith("x-toolctx-")) forwarded.put(h[0], h[1]);
                            }
                            return structured(saw);
                        }),
                tool(mapper, "toolctx_probe", "Counts its own runs (toolctx conformance probe)",
                        "{\"type\":\"object\",\"properties\":{}}",
                        (transport, request, progress) -> {
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

package dev.toolctx.example;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.toolctx.Idempotent;
import dev.toolctx.ToolContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpStatelessServerFeatures;
import io.modelcontextprotocol.server.McpTransportContextExtractor;
import jakarta.servlet.http.HttpServletRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Node example's tools (examples/node-server/common.mjs), each defined
 * once ({@link #all}), for java-sdk's 2025-era servers on either transport
 * (here) and its 2026-07-28 server ({@link ModernTools}):
 * examples/java-server (Jetty) and examples/spring-server (Spring AI) serve
 * the same ones.
 */
public final class Tools {
    static final ObjectMapper JSON = new ObjectMapper();

    private Tools() {}

    /** The tools as a session server's specifications, each recording its run first (--record). */
    public static List<SyncToolSpecification> sessionTools(McpJsonMapper mapper, Recorder record, Idempotent invoices) {
        List<SyncToolSpecification> out = new ArrayList<>();
        for (Tool t : all(mapper)) {
            out.add(SyncToolSpecification.builder()
                    .tool(t.tool())
                    .callHandler((exchange, request) -> run(t, record, invoices, exchange.transportContext(), request, exchange::progressNotification))
                    .build());
        }
        return out;
    }

    /** The same as a stateless server's: no progress (no stream to send it on). */
    public static List<McpStatelessServerFeatures.SyncToolSpecification> statelessTools(McpJsonMapper mapper, Recorder record, Idempotent invoices) {
        List<McpStatelessServerFeatures.SyncToolSpecification> out = new ArrayList<>();
        for (Tool t : all(mapper)) {
            out.add(new McpStatelessServerFeatures.SyncToolSpecification(t.tool(), (transport, request) -> run(t, record, invoices, transport, request, n -> {})));
        }
        return out;
    }

    static ArrayNode headerPairs(List<String[]> headers) {
        ArrayNode a = JSON.createArrayNode();
        for (String[] h : headers) a.addArray().add(h[0]).add(h[1]);
        return a;
    }

    static ObjectNode object() {
        return JSON.createObjectNode();
    }

    /** The verified context, or null when this call was passed without one. */
    static ToolContext contextOf(McpTransportContext transport) {
        return ToolContext.find(transport).orElse(null);
    }

    static final String HEADERS = "example.headers";

    /** The request's headers into the transport context, for whoami and --record: java-sdk hands a tool only that context. */
    public static McpTransportContextExtractor<HttpServletRequest> headers() {
        return request -> McpTransportContext.create(Map.of(HEADERS, headersOf(request)));
    }

    /** The request's header lines as [name, value] pairs, names in lower case. */
    static List<String[]> headersOf(HttpServletRequest request) {
        List<String[]> out = new ArrayList<>();
        java.util.Enumeration<String> names = request.getHeaderNames();
        while (names.hasMoreElements()) {
            String n = names.nextElement();
            java.util.Enumeration<String> values = request.getHeaders(n);
            while (values.hasMoreElements()) out.add(new String[] {n.toLowerCase(java.util.Locale.ROOT), values.nextElement()});
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static List<String[]> headersOf(McpTransportContext transport) {
        Object h = transport.get(HEADERS);
        return h instanceof List ? (List<String[]>) h : List.of();
    }

    static final AtomicInteger PROBE_RUNS = new AtomicInteger();

    /** Sends one progress report, when the transport can (a session's, not a stateless one's). */
    interface Progress {
        void report(McpSchema.ProgressNotification notification);
    }

    /** A tool's logic, on either transport: the transport context, the request, progress. */
    interface Handler {
        CallToolResult call(McpTransportContext transport, CallToolRequest request, Progress progress);
    }

    /**
     * One tool, whatever server serves it: its definition ({@code schema}, the
     * input schema's JSON) and its body. {@code idempotent}: not safe to run
     * twice, so each server runs it through {@link Idempotent}, and its run
     * line is written inside the guard (a replayed retry runs nothing).
     */
    record Tool(McpSchema.Tool tool, String schema, Handler handler, boolean idempotent) {}

    static Tool tool(McpJsonMapper mapper, String name, String description, String schema, Handler handler) {
        return new Tool(McpSchema.Tool.builder().name(name).description(description).inputSchema(mapper, schema).build(), schema, handler, false);
    }

    /** The tool's body, its run recorded first (--record). */
    static CallToolResult body(Tool t, Recorder record, McpTransportContext transport, CallToolRequest request, Progress progress) {
        if (record != null) record.run(t.tool().name(), transport);
        return t.handler().call(transport, request, progress);
    }

    /** One call on a 2025-era server, an idempotent tool's through {@code invoices}. */
    static CallToolResult run(Tool t, Recorder record, Idempotent invoices, McpTransportContext transport, CallToolRequest request, Progress progress) {
        if (!t.idempotent()) return body(t, record, transport, request, progress);
        return invoices.wrapStateless((tr, r) -> body(t, record, tr, r, progress)).apply(transport, request);
    }

    /** create_invoice: not safe to run twice, so a retry gets the first result back ({@link Idempotent}). */
    static Tool createInvoice(McpJsonMapper mapper) {
        Tool t = tool(mapper, "create_invoice", "Not safe to run twice: a retry gets the first result back",
                "{\"type\":\"object\",\"properties\":{\"amount\":{\"type\":\"integer\"}},\"required\":[\"amount\"]}",
                (transport, request, progress) -> {
                    ToolContext ctx = contextOf(transport);
                    ObjectNode out = object();
                    out.put("invoice", "inv-" + (ctx == null ? "" : ctx.idempotencyKey()));
                    Object amount = request.arguments() == null ? null : request.arguments().get("amount");
                    out.put("amount", amount instanceof Number ? ((Number) amount).longValue() : 0);
                    return structured(out);
                });
        return new Tool(t.tool(), t.schema(), t.handler(), true);
    }

    static List<Tool> all(McpJsonMapper mapper) {
        return List.of(
                createInvoice(mapper),
                tool(mapper, "get_order", "Looks up an order; says which task asked for it",
                        "{\"type\":\"object\",\"properties\":{\"orderId\":{\"type\":\"string\"}},\"required\":[\"orderId\"]}",
                        (transport, request, progress) -> {
                            ToolContext ctx = contextOf(transport);
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
                            ToolContext ctx = contextOf(transport);
                            ObjectNode saw = object();
                            saw.put("verified_here", transport.get(ToolContext.JUDGED) != null);
                            if (ctx == null) saw.putNull("context");
                            else saw.set("context", ctx.json());
                            ObjectNode forwarded = saw.putObject("proxy_headers");
                            for (String[] h : headersOf(transport)) {
                                if (h[0].startsWith("x-toolctx-")) forwarded.put(h[0], h[1]);
                            }
                            return structured(saw);
                        }),
                tool(mapper, "toolctx_probe", "Counts its own runs (toolctx conformance probe)",
                        "{\"type\":\"object\",\"properties\":{}}",
                        (transport, request, progress) -> {
                            ObjectNode out = object();
                            out.put("runs", PROBE_RUNS.incrementAndGet());
                            return structured(out);
                        }));
    }

    static CallToolResult text(String text) {
        return CallToolResult.builder().content(List.of(new McpSchema.TextContent(text))).build();
    }

    @SuppressWarnings("unchecked")
    static CallToolResult structured(ObjectNode out) {
        Map<String, Object> value = JSON.convertValue(out, Map.class);
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

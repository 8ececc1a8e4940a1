package dev.toolctx;

import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.server.McpTransportContextExtractor;
import jakarta.servlet.http.HttpServletRequest;
import java.util.HashMap;
import java.util.Map;

/**
 * Copies what {@link ToolctxFilter} decided into java-sdk's
 * {@link McpTransportContext}: give it to the servlet transport's builder
 * ({@code .contextExtractor(new ToolctxContextExtractor())}) and read the
 * context in a tool with {@link ToolContext#from}. Another extractor's
 * entries can be kept ({@link #ToolctxContextExtractor(McpTransportContextExtractor)}).
 */
public final class ToolctxContextExtractor implements McpTransportContextExtractor<HttpServletRequest> {
    private final McpTransportContextExtractor<HttpServletRequest> inner;

    public ToolctxContextExtractor() {
        this(null);
    }

    /** Adds the toolctx entries to what {@code inner} extracts. */
    public ToolctxContextExtractor(McpTransportContextExtractor<HttpServletRequest> inner) {
        this.inner = inner;
    }

    @Override
    public McpTransportContext extract(HttpServletRequest request) {
        Map<String, Object> entries = new HashMap<>();
        if (inner != null) {
            McpTransportContext theirs = inner.extract(request);
            if (theirs != null && theirs != McpTransportContext.EMPTY) {
                return withOurs(theirs, request);
            }
        }
        put(entries, request);
        return entries.isEmpty() ? McpTransportContext.EMPTY : McpTransportContext.create(entries);
    }

    private static void put(Map<String, Object> entries, HttpServletRequest request) {
        Object judged = request.getAttribute(ToolContext.JUDGED);
        if (judged != null) entries.put(ToolContext.JUDGED, judged);
        Object context = request.getAttribute(ToolContext.ATTRIBUTE);
        if (context != null) entries.put(ToolContext.ATTRIBUTE, context);
        String revision = request.getHeader("MCP-Protocol-Version");
        if (revision != null) entries.put(ToolContext.REVISION, revision);
    }

    /** Their context, ours looked up first. */
    private static McpTransportContext withOurs(McpTransportContext theirs, HttpServletRequest request) {
        Map<String, Object> ours = new HashMap<>();
        put(ours, request);
        return new McpTransportContext() {
            @Override
            public Object get(String key) {
                return ours.containsKey(key) ? ours.get(key) : theirs.get(key);
            }
        };
    }
}

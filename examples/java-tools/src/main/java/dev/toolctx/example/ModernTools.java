package dev.toolctx.example;

import dev.toolctx.Idempotent;
import dev.toolctx.ModernIdempotent;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpSyncResponse;
import io.modelcontextprotocol.modern.server.feature.McpSyncTool;
import io.modelcontextprotocol.modern.server.feature.McpSyncToolRepository;
import io.modelcontextprotocol.modern.server.feature.ToolsPage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * The same tools ({@link Tools#all}) for java-sdk's 2026-07-28 server
 * ({@code io.modelcontextprotocol.modern}, java-sdk 2.2): each call's
 * request handed to the tool's body as the 2025-era request it reads, its
 * result converted back, progress sent on the call's stream when the client
 * asked for it, create_invoice through {@link ModernIdempotent}. A class of
 * its own: examples/spring-server runs the shared tools on java-sdk 2.0.0,
 * which has no modern server.
 */
public final class ModernTools {
    private ModernTools() {}

    /** The tools as the modern server's repository (for {@code ToolsFeature.ofSync}). */
    public static McpSyncToolRepository tools(McpJsonMapper mapper, Recorder record, Idempotent invoices) {
        Map<String, McpSyncTool> byName = new LinkedHashMap<>();
        for (Tools.Tool t : Tools.all(mapper)) {
            McpSchema.Tool definition = McpSchema.Tool.builder(t.tool().name(), mapper, t.schema())
                    .description(t.tool().description()).build();
            byName.put(definition.name(), McpSyncTool.of(definition, handler(mapper, t, record, invoices)));
        }
        List<McpSchema.Tool> definitions = new ArrayList<>();
        for (McpSyncTool tool : byName.values()) definitions.add(tool.definition());
        ToolsPage page = ToolsPage.of(List.copyOf(definitions));
        return new McpSyncToolRepository() {
            @Override
            public ToolsPage list(McpRequestContext ctx, String cursor) {
                return page;
            }

            @Override
            public McpSyncTool find(McpRequestContext ctx, String name) {
                return byName.get(name);
            }
        };
    }

    private static McpSyncTool.Handler handler(McpJsonMapper mapper, Tools.Tool t, Recorder record, Idempotent invoices) {
        if (t.idempotent()) {
            // No progress: the guard answers with one result.
            return ModernIdempotent.wrap(invoices, call(mapper, t, record, n -> {}));
        }
        return (ctx, request) -> {
            if (ctx.progressToken() == null) return McpSyncResponse.result(call(mapper, t, record, n -> {}).apply(ctx, request));
            return McpSyncResponse.streaming(notifier -> call(mapper, t, record,
                    n -> notifier.progress(n.progress(), n.total(), n.message())).apply(ctx, request));
        };
    }

    /** The tool's body on a modern call: the request and result converted, nothing else. */
    private static BiFunction<McpRequestContext, McpSchema.CallToolRequest, McpSchema.CallToolResult> call(
            McpJsonMapper mapper, Tools.Tool t, Recorder record, Tools.Progress progress) {
        return (ctx, request) -> {
            var legacy = new io.modelcontextprotocol.spec.McpSchema.CallToolRequest(request.name(), request.arguments(), request.meta());
            return mapper.convertValue(Tools.body(t, record, ctx.transportContext(), legacy, progress), McpSchema.CallToolResult.class);
        };
    }
}

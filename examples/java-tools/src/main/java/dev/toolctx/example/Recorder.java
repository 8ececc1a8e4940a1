package dev.toolctx.example;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.toolctx.ToolContext;
import io.modelcontextprotocol.common.McpTransportContext;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * --record FILE: one JSON line for every request handed on past the filter
 * ({"handed_on", "headers", "context"}) and one for every tool run ({"run",
 * "headers"}), each written before the request goes on or the tool runs
 * (test drivers: tests/hostile).
 */
public final class Recorder {
    private final FileOutputStream out;

    public Recorder(String path) throws IOException {
        this.out = new FileOutputStream(path, true);
    }

    private synchronized void line(ObjectNode entry) {
        try {
            out.write((entry.toString() + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Filter filter() {
        return (request, response, chain) -> {
            HttpServletRequest req = (HttpServletRequest) request;
            ObjectNode e = Tools.object();
            e.put("handed_on", req.getMethod());
            e.set("headers", Tools.headerPairs(Tools.headersOf(req)));
            Object c = req.getAttribute(ToolContext.ATTRIBUTE);
            if (c instanceof ToolContext) e.set("context", ((ToolContext) c).json());
            else e.putNull("context");
            line(e);
            chain.doFilter(request, response);
        };
    }

    void run(String tool, McpTransportContext transport) {
        ObjectNode e = Tools.object();
        e.put("run", tool);
        e.set("headers", Tools.headerPairs(Tools.headersOf(transport)));
        line(e);
    }
}

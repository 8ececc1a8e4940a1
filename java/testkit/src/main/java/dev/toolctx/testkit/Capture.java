package dev.toolctx.testkit;

import dev.toolctx.ToolContext;
import dev.toolctx.internal.ReplayedBody;
import io.modelcontextprotocol.common.McpTransportContext;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.function.Function;

/**
 * The filter behind ToolctxFilter in the vector runs: what the request
 * looked like when it was handed on (its headers in two views, the context
 * attribute, the body it replays), and what java-sdk's context extractor
 * made of it. Cases run one at a time.
 */
final class Capture implements Filter {
    static final class Seen {
        volatile boolean reached;
        volatile List<String[]> headers = List.of();
        volatile Function<String, String> single = n -> null;
        volatile Object context;
        volatile byte[] body;
        volatile McpTransportContext extracted;
        volatile boolean extractorRan;
    }

    private volatile Seen seen = new Seen();

    void reset() {
        seen = new Seen();
    }

    Seen seen() {
        return seen;
    }

    void extracted(McpTransportContext c) {
        Seen s = seen;
        s.extracted = c;
        s.extractorRan = true;
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain) throws IOException, ServletException {
        HttpServletRequest req = (HttpServletRequest) request;
        Seen s = seen;
        List<String[]> headers = new ArrayList<>();
        Enumeration<String> names = req.getHeaderNames();
        while (names.hasMoreElements()) {
            String n = names.nextElement();
            Enumeration<String> values = req.getHeaders(n);
            while (values.hasMoreElements()) headers.add(new String[] {n, values.nextElement()});
        }
        s.headers = headers;
        s.single = req::getHeader;
        s.context = req.getAttribute(ToolContext.ATTRIBUTE);
        byte[] body = req.getInputStream().readAllBytes();
        s.body = body;
        s.reached = true;
        chain.doFilter(new Replay(req, body), response);
    }

    /** The body read here, replayed to java-sdk. */
    private static final class Replay extends HttpServletRequestWrapper {
        private final byte[] body;

        Replay(HttpServletRequest req, byte[] body) {
            super(req);
            this.body = body;
        }

        @Override
        public ServletInputStream getInputStream() {
            return new ReplayedBody(body);
        }
    }
}

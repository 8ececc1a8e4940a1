package dev.toolctx;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The servlet filter in front of an MCP servlet (java-sdk's
 * {@code HttpServletStreamableServerTransportProvider} or stateless
 * transport). The transport reads its context before the body, so the
 * decision is made here:
 *
 * <ul>
 *   <li>the static credential is checked on the headers before the body is read;
 *   <li>the body is read up to {@code max_body_bytes} + 1 (one more is
 *       enough for the core to refuse {@code body_too_large});
 *   <li>a refusal is written exactly as the core rendered it (status,
 *       {@code content-type: application/json}, body) and the chain stops;
 *   <li>otherwise the chain goes on with the body replayed, every copy of
 *       the removed headers gone, an accepted call's headers set, and the
 *       verified context as the request attribute {@link ToolContext#ATTRIBUTE}
 *       ({@link ToolctxContextExtractor} copies it into the MCP transport context).
 * </ul>
 */
public final class ToolctxFilter implements Filter {
    private final Verifier verifier;
    private final LongSupplier clock;

    public ToolctxFilter(Verifier verifier) {
        this(verifier, () -> System.currentTimeMillis() / 1000);
    }

    /** With a clock in Unix seconds (tests). */
    public ToolctxFilter(Verifier verifier, LongSupplier clock) {
        this.verifier = verifier;
        this.clock = clock;
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain) throws IOException, ServletException {
        if (!(request instanceof HttpServletRequest) || !(response instanceof HttpServletResponse)) {
            throw new ServletException("toolctx: ToolctxFilter needs an HTTP request");
        }
        HttpServletRequest req = (HttpServletRequest) request;
        HttpServletResponse res = (HttpServletResponse) response;
        String method = req.getMethod();
        List<Header> headers = headers(req);
        Verdict head = verifier.checkHeaders(method, headers);
        switch (head.outcome()) {
            case PASS:
                chain.doFilter(handedOn(req, head, null), res);
                return;
            case REJECT:
                refuse(res, head.refusal().orElseThrow(), false);
                return;
            default:
                break;
        }
        int max = verifier.maxBodyBytes();
        byte[] body;
        try (InputStream in = req.getInputStream()) {
            body = in.readNBytes(max == Integer.MAX_VALUE ? max : max + 1);
        }
        // The whole check on the whole request: the core's header ticket lives in
        // the instance that issued it, and this call may get another one from
        // the pool (steps 0 and 1 again cost little).
        Verdict verdict = verifier.verify(method, headers, body, clock.getAsLong());
        switch (verdict.outcome()) {
            case REJECT:
                refuse(res, verdict.refusal().orElseThrow(), body.length > max);
                return;
            case ACCEPT:
            case PASS:
                chain.doFilter(handedOn(req, verdict, body), res);
                return;
            default:
                throw new ServletException("toolctx: unexpected verdict " + verdict);
        }
    }

    /** The request's header lines in order, repeated headers kept repeated. */
    static List<Header> headers(HttpServletRequest req) {
        List<Header> out = new ArrayList<>();
        Enumeration<String> names = req.getHeaderNames();
        while (names != null && names.hasMoreElements()) {
            String name = names.nextElement();
            Enumeration<String> values = req.getHeaders(name);
            while (values.hasMoreElements()) out.add(new Header(name, values.nextElement()));
        }
        return out;
    }

    private static HttpServletRequest handedOn(HttpServletRequest req, Verdict verdict, byte[] body) {
        req.setAttribute(ToolContext.JUDGED, verdict.outcome().name());
        verdict.context().ifPresent(c -> req.setAttribute(ToolContext.ATTRIBUTE, c));
        if (body == null && verdict.remove().isEmpty()) return req;
        return new VerifiedRequest(req, body, verdict.remove(), verdict.set());
    }

    private static void refuse(HttpServletResponse res, Refusal r, boolean closeConnection) throws IOException {
        byte[] body = r.body().getBytes(StandardCharsets.UTF_8);
        res.setStatus(r.status());
        res.setContentType("application/json");
        res.setContentLength(body.length);
        // The rest of an oversized body is not read: end the connection instead.
        if (closeConnection) res.setHeader("connection", "close");
        res.getOutputStream().write(body);
        res.flushBuffer();
    }

    /** Unused: the filter is created with its verifier. */
    @Override
    public void init(jakarta.servlet.FilterConfig config) {}

    @Override
    public void destroy() {}

}

package dev.toolctx;

import dev.toolctx.internal.ReplayedBody;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The request {@link ToolctxFilter} hands on: the body it read, replayed;
 * the headers the core removes gone (every copy, any letter case); the
 * headers the core sets present with the values it encoded.
 */
final class VerifiedRequest extends HttpServletRequestWrapper {
    private final byte[] body;
    private final List<String> remove;
    private final List<Header> set;

    VerifiedRequest(HttpServletRequest req, byte[] body, List<String> remove, List<Header> set) {
        super(req);
        this.body = body;
        this.remove = remove;
        this.set = set;
    }

    private boolean removed(String name) {
        return remove.contains(name.toLowerCase(Locale.ROOT));
    }

    private List<String> setValues(String name) {
        List<String> out = new ArrayList<>();
        for (Header h : set) if (h.name().equalsIgnoreCase(name)) out.add(h.value());
        return out;
    }

    @Override
    public String getHeader(String name) {
        List<String> s = setValues(name);
        if (!s.isEmpty()) return s.get(0);
        return removed(name) ? null : super.getHeader(name);
    }

    @Override
    public Enumeration<String> getHeaders(String name) {
        List<String> out = new ArrayList<>();
        if (!removed(name)) {
            Enumeration<String> e = super.getHeaders(name);
            while (e != null && e.hasMoreElements()) out.add(e.nextElement());
        }
        out.addAll(setValues(name));
        return Collections.enumeration(out);
    }

    @Override
    public Enumeration<String> getHeaderNames() {
        Set<String> names = new LinkedHashSet<>();
        Enumeration<String> e = super.getHeaderNames();
        while (e != null && e.hasMoreElements()) {
            String n = e.nextElement();
            if (!removed(n)) names.add(n);
        }
        for (Header h : set) names.add(h.name());
        return Collections.enumeration(names);
    }

    @Override
    public long getDateHeader(String name) {
        return removed(name) && setValues(name).isEmpty() ? -1 : super.getDateHeader(name);
    }

    @Override
    public int getIntHeader(String name) {
        String v = getHeader(name);
        return v == null ? -1 : Integer.parseInt(v.trim());
    }

    @Override
    public int getContentLength() {
        return body == null ? super.getContentLength() : body.length;
    }

    @Override
    public long getContentLengthLong() {
        return body == null ? super.getContentLengthLong() : body.length;
    }

    @Override
    public ServletInputStream getInputStream() throws IOException {
        if (body == null) return super.getInputStream();
        return new ReplayedBody(body);
    }

    @Override
    public BufferedReader getReader() throws IOException {
        if (body == null) return super.getReader();
        String enc = getCharacterEncoding();
        Charset cs = enc == null ? StandardCharsets.UTF_8 : Charset.forName(enc);
        return new BufferedReader(new InputStreamReader(new ByteArrayInputStream(body), cs));
    }
}

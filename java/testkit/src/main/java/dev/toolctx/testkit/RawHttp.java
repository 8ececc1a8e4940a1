package dev.toolctx.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * HTTP/1.1 over a plain socket: the case's header values go out as their
 * UTF-8 bytes, exactly, repeated headers repeated (an HTTP client library
 * would refuse or rewrite some of them).
 */
final class RawHttp {
    private RawHttp() {}

    record Response(int status, List<String[]> headers, byte[] body) {
        String header(String name) {
            for (String[] h : headers) if (h[0].equalsIgnoreCase(name)) return h[1];
            return null;
        }
    }

    static Response send(int port, String method, List<String[]> headers, byte[] body) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(5000);
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            head.write((method + " /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n").getBytes(StandardCharsets.UTF_8));
            for (String[] h : headers) head.write((h[0] + ": " + h[1] + "\r\n").getBytes(StandardCharsets.UTF_8));
            head.write(("Content-Length: " + body.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.UTF_8));
            OutputStream out = s.getOutputStream();
            out.write(head.toByteArray());
            out.write(body);
            out.flush();
            return read(s.getInputStream());
        }
    }

    private static Response read(InputStream in) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        try {
            for (int n; (n = in.read(buf)) >= 0; ) all.write(buf, 0, n);
        } catch (SocketTimeoutException | java.net.SocketException e) {
            // A stream that stays open (SSE) or a reset after a refusal: judge what came.
        }
        byte[] bytes = all.toByteArray();
        int end = indexOf(bytes, "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        if (end < 0) throw new IOException("no HTTP response head (" + bytes.length + " bytes)");
        String[] lines = new String(bytes, 0, end, StandardCharsets.ISO_8859_1).split("\r\n");
        int status = Integer.parseInt(lines[0].split(" ")[1]);
        List<String[]> hs = new ArrayList<>();
        for (int i = 1; i < lines.length; i++) {
            int c = lines[i].indexOf(':');
            hs.add(new String[] {lines[i].substring(0, c).trim(), lines[i].substring(c + 1).trim()});
        }
        byte[] rest = java.util.Arrays.copyOfRange(bytes, end + 4, bytes.length);
        Response r = new Response(status, hs, rest);
        String te = r.header("transfer-encoding");
        if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) r = new Response(status, hs, dechunk(rest));
        return r;
    }

    private static byte[] dechunk(byte[] b) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int at = 0;
        while (at < b.length) {
            int nl = indexOf(java.util.Arrays.copyOfRange(b, at, b.length), "\r\n".getBytes(StandardCharsets.ISO_8859_1));
            if (nl < 0) break;
            int size = Integer.parseInt(new String(b, at, nl, StandardCharsets.ISO_8859_1).split(";")[0].trim(), 16);
            at += nl + 2;
            if (size == 0 || at + size > b.length) break;
            out.write(b, at, size);
            at += size + 2;
        }
        return out.toByteArray();
    }

    private static int indexOf(byte[] b, byte[] what) {
        outer:
        for (int i = 0; i + what.length <= b.length; i++) {
            for (int j = 0; j < what.length; j++) if (b[i + j] != what[j]) continue outer;
            return i;
        }
        return -1;
    }
}

package dev.toolctx.internal;

import dev.toolctx.Header;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** A request's method and headers (and body) as the ABI's input fields: {@code lens}, {@code heads}[, body]. */
public final class Heads {
    private Heads() {}

    public static byte[][] encode(String method, List<Header> headers, byte[] body) {
        int count = 1 + headers.size() * 2;
        int[] lens = new int[count];
        byte[][] parts = new byte[count][];
        parts[0] = bytes(method);
        for (int i = 0; i < headers.size(); i++) {
            parts[1 + i * 2] = bytes(headers.get(i).name());
            parts[2 + i * 2] = bytes(headers.get(i).value());
        }
        int total = 0;
        for (int i = 0; i < count; i++) {
            lens[i] = parts[i].length;
            total += lens[i];
        }
        byte[] heads = new byte[total];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, heads, at, p.length);
            at += p.length;
        }
        byte[] l = Fields.lengths(lens, count);
        return body == null ? new byte[][] {l, heads} : new byte[][] {l, heads, body};
    }

    /** A servlet header string: one byte per char when every char fits a byte (as the container decoded it), UTF-8 otherwise. */
    static byte[] bytes(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) > 0xff) return s.getBytes(StandardCharsets.UTF_8);
        }
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }
}

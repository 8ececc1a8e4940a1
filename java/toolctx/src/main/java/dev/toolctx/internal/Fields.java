package dev.toolctx.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** The ABI's fields: each a u32 little-endian length, then its bytes. */
public final class Fields {
    private Fields() {}

    public static byte[] encode(byte[][] fields) {
        int total = 0;
        for (byte[] f : fields) total += 4 + f.length;
        byte[] out = new byte[total];
        int at = 0;
        for (byte[] f : fields) {
            at = putU32(out, at, f.length);
            System.arraycopy(f, 0, out, at, f.length);
            at += f.length;
        }
        return out;
    }

    static int putU32(byte[] out, int at, int v) {
        out[at] = (byte) v;
        out[at + 1] = (byte) (v >>> 8);
        out[at + 2] = (byte) (v >>> 16);
        out[at + 3] = (byte) (v >>> 24);
        return at + 4;
    }

    /** Lengths as the ABI's {@code lens} field: u32 little-endian each. */
    public static byte[] lengths(int[] lens, int count) {
        byte[] out = new byte[count * 4];
        for (int i = 0; i < count; i++) putU32(out, i * 4, lens[i]);
        return out;
    }

    /** Reads fields from {@code bytes} starting at {@code from}. */
    public static List<byte[]> decode(byte[] bytes, int from) {
        List<byte[]> out = new ArrayList<>();
        int at = from;
        while (at < bytes.length) {
            if (at + 4 > bytes.length) throw new IllegalStateException("toolctx: a field's length is cut short");
            int len = (bytes[at] & 0xff) | (bytes[at + 1] & 0xff) << 8 | (bytes[at + 2] & 0xff) << 16 | (bytes[at + 3] & 0xff) << 24;
            at += 4;
            if (len < 0 || len > bytes.length - at) throw new IllegalStateException("toolctx: a field runs past the answer");
            byte[] f = new byte[len];
            System.arraycopy(bytes, at, f, 0, len);
            out.add(f);
            at += len;
        }
        return out;
    }

    public static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    public static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}

package dev.toolctx.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.POJONode;
import java.math.BigInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * JSON read without rounding (as npm/test/vectors.mjs's readJson): every
 * number is kept as its text ({@link Num}), so an id of
 * 12345678901234567890 or a 1e99999999999999999999 in a context compares
 * exactly. Vector files, refusal bodies and the core's context go through it.
 */
final class ExactJson {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final ObjectMapper STRINGS = new ObjectMapper();
    private static final Pattern NUMBER = Pattern.compile("^(-?)(\\d+)(?:\\.(\\d+))?(?:[eE]([+-]?\\d+))?$");

    /** A number's text. */
    record Num(String text) {
        /** Sign, significant digits and where the point stands: equal keys, equal values. */
        String key() {
            Matcher m = NUMBER.matcher(text);
            if (!m.matches()) return text;
            String whole = m.group(2);
            String frac = m.group(3) == null ? "" : m.group(3);
            String digits = whole + frac;
            String significant = digits.replaceFirst("^0+", "");
            if (significant.isEmpty()) return "0";
            BigInteger point = BigInteger.valueOf(whole.length() - (digits.length() - significant.length()))
                    .add(new BigInteger(m.group(4) == null ? "0" : m.group(4)));
            return m.group(1) + "0." + significant.replaceFirst("0+$", "") + "e" + point;
        }

        @Override
        public String toString() {
            return text;
        }
    }

    private final String s;
    private int at;

    private ExactJson(String s) {
        this.s = s;
    }

    static JsonNode read(String text) {
        ExactJson r = new ExactJson(text);
        JsonNode v = r.value();
        r.ws();
        if (r.at != text.length()) throw new IllegalArgumentException("JSON: trailing data at " + r.at);
        return v;
    }

    static boolean isNum(JsonNode n) {
        return n instanceof POJONode && ((POJONode) n).getPojo() instanceof Num;
    }

    static Num num(JsonNode n) {
        return (Num) ((POJONode) n).getPojo();
    }

    /** JSON text of {@code n}, numbers as written. */
    static String write(JsonNode n) {
        if (isNum(n)) return num(n).text();
        StringBuilder b = new StringBuilder();
        if (n.isObject()) {
            b.append('{');
            var it = n.fields();
            while (it.hasNext()) {
                var e = it.next();
                b.append(quote(e.getKey())).append(':').append(write(e.getValue()));
                if (it.hasNext()) b.append(',');
            }
            return b.append('}').toString();
        }
        if (n.isArray()) {
            b.append('[');
            for (int i = 0; i < n.size(); i++) b.append(i > 0 ? "," : "").append(write(n.get(i)));
            return b.append(']').toString();
        }
        return n.isTextual() ? quote(n.asText()) : n.toString();
    }

    private static String quote(String s) {
        try {
            return STRINGS.writeValueAsString(s);
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    private void ws() {
        while (at < s.length() && " \t\n\r".indexOf(s.charAt(at)) >= 0) at++;
    }

    private JsonNode value() {
        ws();
        if (at >= s.length()) throw new IllegalArgumentException("JSON: unexpected end");
        char c = s.charAt(at);
        if (c == '{') {
            at++;
            ObjectNode o = F.objectNode();
            ws();
            if (s.charAt(at) == '}') {
                at++;
                return o;
            }
            while (true) {
                ws();
                String k = string();
                ws();
                expect(':');
                o.set(k, value());
                ws();
                if (s.charAt(at) == '}') {
                    at++;
                    return o;
                }
                expect(',');
            }
        }
        if (c == '[') {
            at++;
            ArrayNode a = F.arrayNode();
            ws();
            if (s.charAt(at) == ']') {
                at++;
                return a;
            }
            while (true) {
                a.add(value());
                ws();
                if (s.charAt(at) == ']') {
                    at++;
                    return a;
                }
                expect(',');
            }
        }
        if (c == '"') return F.textNode(string());
        for (String lit : new String[] {"true", "false", "null"}) {
            if (s.startsWith(lit, at)) {
                at += lit.length();
                return lit.equals("null") ? F.nullNode() : F.booleanNode(lit.equals("true"));
            }
        }
        int start = at;
        while (at < s.length() && "+-0123456789.eE".indexOf(s.charAt(at)) >= 0) at++;
        String t = s.substring(start, at);
        if (!NUMBER.matcher(t).matches()) throw new IllegalArgumentException("JSON: unexpected input at " + start);
        return F.pojoNode(new Num(t));
    }

    private void expect(char c) {
        if (at >= s.length() || s.charAt(at) != c) throw new IllegalArgumentException("JSON: expected " + c + " at " + at);
        at++;
    }

    private String string() {
        int start = at;
        expect('"');
        while (at < s.length() && s.charAt(at) != '"') at += s.charAt(at) == '\\' ? 2 : 1;
        expect('"');
        try {
            return STRINGS.readValue(s.substring(start, at), String.class);
        } catch (Exception e) {
            throw new IllegalArgumentException("JSON: bad string at " + start);
        }
    }
}

package dev.toolctx.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import dev.toolctx.ToolContext;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/** A case's {@code expect} against what the filter did (docs/VECTORS.md). */
final class Judge {
    private Judge() {}

    static String judge(JsonNode expect, RawHttp.Response r, Capture.Seen seen, byte[] sent) throws Exception {
        String outcome = expect.path("outcome").asText();
        String got = describe(r, seen);
        if ("reject".equals(outcome)) {
            if (seen.reached) return "expected reject " + show(expect.path("status")) + " " + show(expect.path("code")) + ", got " + got;
            return refusal(expect, r, got);
        }
        if (!seen.reached) return "expected " + outcome + ", got " + got;
        if (!Arrays.equals(seen.body, sent)) return "the body handed on differs from the one sent";
        ToolContext context = seen.context instanceof ToolContext ? (ToolContext) seen.context : null;
        if ("pass".equals(outcome)) {
            if (context != null) return "expected pass, got " + got;
        } else if ("accept".equals(outcome)) {
            if (context == null) return "expected accept, got " + got;
            // java-sdk reads the context where the filter left it (POSTs reach its extractor).
            if (seen.extractorRan && ToolContext.find(seen.extracted).orElse(null) != context) {
                return "java-sdk's context extractor did not hand on the verified context";
            }
            JsonNode ctx = ExactJson.read(context.rawJson());
            Iterator<Map.Entry<String, JsonNode>> it = expect.path("context").fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                JsonNode v = ctx.get(e.getKey());
                boolean present = v != null;
                if ((!present && !e.getValue().isNull()) || (present && !jsonEq(e.getValue(), v))) {
                    return "expected context." + e.getKey() + " = " + show(e.getValue()) + ", got " + got;
                }
            }
        } else {
            return "unknown expect.outcome " + outcome;
        }
        if (expect.has("forward")) return forward(expect.get("forward"), seen);
        return null;
    }

    private static String describe(RawHttp.Response r, Capture.Seen seen) {
        if (seen.reached) return seen.context instanceof ToolContext ? "accept " + seen.context : "pass";
        return "HTTP " + r.status() + " " + new String(r.body(), StandardCharsets.UTF_8);
    }

    private static String refusal(JsonNode expect, RawHttp.Response r, String got) {
        if (!String.valueOf(r.status()).equals(ExactJson.write(expect.path("status")))) return "expected reject " + show(expect.path("status")) + " " + show(expect.path("code")) + ", got " + got;
        String type = r.header("content-type");
        if (type == null || !type.startsWith("application/json")) return "refusal content-type " + type;
        JsonNode body;
        try {
            body = ExactJson.read(new String(r.body(), StandardCharsets.UTF_8));
        } catch (Exception e) {
            return "refusal body not JSON: " + got;
        }
        if (!"2.0".equals(body.path("jsonrpc").asText()) || !jsonEq(expect.path("code"), body.path("error").path("code"))) {
            return "expected reject " + show(expect.path("status")) + " " + show(expect.path("code")) + ", got " + got;
        }
        if (expect.path("reason").isTextual() && !expect.get("reason").asText().equals(body.path("error").path("data").path("reason").asText(null))) {
            return "expected reason " + expect.get("reason").asText() + ", got " + got;
        }
        if (expect.has("id") && !(body.has("id") && jsonEq(expect.get("id"), body.get("id")))) {
            return "expected id " + show(expect.get("id")) + ", got " + got;
        }
        return null;
    }

    /** A string must arrive exactly once with that value, null not at all, in each view. */
    private static String forward(JsonNode want, Capture.Seen seen) {
        Iterator<Map.Entry<String, JsonNode>> it = want.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            String name = e.getKey();
            List<String> got = new ArrayList<>();
            for (String[] h : seen.headers) if (h[0].equalsIgnoreCase(name)) got.add(h[1]);
            String single = seen.single.apply(name);
            if (e.getValue().isNull()) {
                if (!got.isEmpty()) return "getHeaders: " + name + " must not reach the upstream, got " + got;
                if (single != null) return "getHeader: " + name + " must not reach the upstream, got " + single;
            } else if (!e.getValue().isTextual()) {
                return "expect.forward." + name + " is neither a string nor null";
            } else {
                String v = e.getValue().asText();
                if (got.size() != 1 || !got.get(0).equals(v)) return "getHeaders: " + name + " = " + show(e.getValue()) + ", got " + got;
                if (!v.equals(single)) return "getHeader: " + name + " = " + show(e.getValue()) + ", got " + single;
            }
        }
        return null;
    }

    private static String show(JsonNode n) {
        return n.isMissingNode() ? "undefined" : ExactJson.write(n);
    }

    /** JSON equality as the contract defines it: member order ignored, numbers by value. */
    static boolean jsonEq(JsonNode a, JsonNode b) {
        if (ExactJson.isNum(a) || ExactJson.isNum(b)) {
            return ExactJson.isNum(a) && ExactJson.isNum(b) && ExactJson.num(a).key().equals(ExactJson.num(b).key());
        }
        if (a.isArray()) {
            if (!b.isArray() || a.size() != b.size()) return false;
            for (int i = 0; i < a.size(); i++) if (!jsonEq(a.get(i), b.get(i))) return false;
            return true;
        }
        if (a.isObject()) {
            if (!b.isObject() || a.size() != b.size()) return false;
            Iterator<Map.Entry<String, JsonNode>> it = a.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                if (!b.has(e.getKey()) || !jsonEq(e.getValue(), b.get(e.getKey()))) return false;
            }
            return true;
        }
        return a.equals(b);
    }

}

package dev.toolctx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.toolctx.internal.Fields;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * tests/vectors/helpers.json on the Java front end (go/helpers_vectors_test.go
 * is the model): every kind through the exports and classes Java uses
 * (HelpersCore, ResultLimits, Coalescer, the replay guard's Redis claim).
 * A kind this runner does not know fails; prints {@code N passed, N failed}.
 */
class HelperVectorsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Kinds not run here, counted and named (none today): a kind left unrun fails the test. */
    private static final Set<String> NOT_IN_JAVA = Set.of();

    private static final Map<String, Function<JsonNode, ObjectNode>> KINDS = Map.ofEntries(
            Map.entry("idempotency.store_key", HelperVectorsTest::storeKey),
            Map.entry("idempotency.argument_hash", HelperVectorsTest::argumentHash),
            Map.entry("idempotency.entry", HelperVectorsTest::entry),
            Map.entry("idempotency.held", HelperVectorsTest::held),
            Map.entry("idempotency.wait", HelperVectorsTest::idemWait),
            Map.entry("idempotency.refusal", in -> obj().put("result_json",
                    HelpersCore.text("toolctx_idem_refusal", in.path("outcome").asText(), in.path("key").asText()))),
            Map.entry("idempotency.redis_commands", HelperVectorsTest::redisCommands),
            Map.entry("idempotency.redis_reply", HelperVectorsTest::idemRedisReply),
            Map.entry("idempotency.defaults", HelperVectorsTest::defaults),
            Map.entry("replay.redis_claim", HelperVectorsTest::replayClaim),
            Map.entry("replay.redis_reply", HelperVectorsTest::replayReply),
            Map.entry("result_limits", HelperVectorsTest::resultLimits),
            Map.entry("progress", HelperVectorsTest::progress));

    @Test
    void everyHelperVectorOfEveryKind() throws Exception {
        JsonNode file = JSON.readTree(Files.readString(Path.of("../../tests/vectors/helpers.json")));
        assertEquals("toolctx-helpers", file.path("format").asText());
        int passed = 0;
        List<String> failures = new ArrayList<>();
        Map<String, Integer> left = new TreeMap<>();
        for (JsonNode c : file.path("cases")) {
            String name = c.path("name").asText();
            String kind = c.path("kind").asText();
            if (NOT_IN_JAVA.contains(kind)) {
                left.merge(kind, 1, Integer::sum);
                continue;
            }
            Function<JsonNode, ObjectNode> run = KINDS.get(kind);
            String failure;
            if (run == null) {
                failure = "kind " + kind + " unknown to this runner";
            } else {
                try {
                    failure = judge(kind, c.path("expect"), run.apply(c.path("input")));
                } catch (RuntimeException e) {
                    failure = "threw " + e;
                }
            }
            if (failure == null) {
                passed++;
            } else {
                failures.add(name + ": " + failure);
                System.out.println("FAIL " + name + ": " + failure);
            }
        }
        if (!left.isEmpty()) failures.add("not run by this runner: " + left);
        System.out.println(passed + " passed, " + failures.size() + " failed");
        assertTrue(passed > 0, "no helper case ran");
        assertTrue(failures.isEmpty(), String.join("\n", failures));
    }

    /** Every expected key, compared as JSON values (numbers by value); null when all match. */
    private static String judge(String kind, JsonNode expect, ObjectNode got) {
        for (var it = expect.fields(); it.hasNext(); ) {
            var e = it.next();
            // The verifier's refusal for the answer is judged by the verdict tests.
            if (kind.equals("replay.redis_reply") && e.getKey().equals("reason")) continue;
            JsonNode have = got.get(e.getKey());
            if (have == null || !e.getValue().equals(HelperVectorsTest::sameValue, have)) {
                return e.getKey() + " = " + e.getValue() + ", got " + have;
            }
        }
        return null;
    }

    private static int sameValue(JsonNode a, JsonNode b) {
        if (a.isNumber() && b.isNumber()) return a.decimalValue().compareTo(b.decimalValue());
        return a.equals(b) ? 0 : 1;
    }

    private static ObjectNode obj() {
        return JSON.createObjectNode();
    }

    private static JsonNode parse(String text) {
        try {
            return JSON.readTree(text);
        } catch (java.io.IOException e) {
            throw new IllegalStateException("not JSON: " + text);
        }
    }

    /** The core's error code as {@code {"error": code}}. */
    private static ObjectNode coreAnswer(Function<Void, ObjectNode> op) {
        try {
            return op.apply(null);
        } catch (ToolctxException e) {
            return obj().put("error", e.code());
        }
    }

    private static String storeKeyOf(JsonNode in) {
        return HelpersCore.text("toolctx_idem_store_key", in.path("namespace").asText(), in.path("key").asText());
    }

    private static ObjectNode storeKey(JsonNode in) {
        String storeKey = storeKeyOf(in);
        return obj().put("store_key", storeKey)
                .put("redis_key", HelpersCore.text("toolctx_idem_redis_key", in.path("prefix").asText(), storeKey));
    }

    private static ObjectNode argumentHash(JsonNode in) {
        String args = in.path("arguments_json").asText();
        try {
            return obj().put("canonical", HelpersCore.text("toolctx_canonical_json", args))
                    .put("hash", HelpersCore.text("toolctx_idem_argument_hash", args));
        } catch (ToolctxException e) {
            return obj().put("error", true);
        }
    }

    private static ObjectNode entry(JsonNode in) {
        return coreAnswer(v -> obj().put("text", in.path("state").asText().equals("running")
                ? HelpersCore.text("toolctx_idem_running", in.path("hash").asText(), in.path("owner").asText())
                : HelpersCore.text("toolctx_idem_done", in.path("hash").asText(), in.path("result_json").asText())));
    }

    private static byte[] heldBytes(JsonNode in, String text, String hex) {
        if (in.hasNonNull(text)) return in.get(text).asText().getBytes(StandardCharsets.UTF_8);
        return HexFormat.of().parseHex(in.path(hex).asText());
    }

    private static ObjectNode held(JsonNode in) {
        return coreAnswer(v -> {
            if (!in.path("revision").isTextual()) throw new IllegalStateException("held: no revision");
            String answer = HelpersCore.text("toolctx_idem_held", heldBytes(in, "held", "held_hex"), in.path("hash").asText(),
                    in.path("revision").asText());
            if (answer.equals("c")) return obj().put("answer", "conflict");
            if (answer.equals("w")) return obj().put("answer", "in_flight");
            if (answer.startsWith("r")) return obj().put("answer", "replay").put("replayed", answer.substring(1));
            throw new IllegalStateException("held: unexpected answer " + answer);
        });
    }

    private static ObjectNode idemWait(JsonNode in) {
        long pause = HelpersCore.waitMs(in.path("now_ms").asLong(), in.path("deadline_ms").asLong(), in.path("round").asInt());
        return pause < 0 ? obj().put("answer", "in_progress") : obj().put("sleep_ms", pause);
    }

    private static ArrayNode redisArgs(String command, String key, String entry, long ms) {
        ArrayNode out = JSON.createArrayNode();
        for (byte[] a : HelpersCore.list("toolctx_idem_redis_args", ms, command, key, entry)) out.add(Fields.text(a));
        return out;
    }

    private static ObjectNode redisCommands(JsonNode in) {
        String key = HelpersCore.text("toolctx_idem_redis_key", in.path("prefix").asText(), storeKeyOf(in));
        String hash = in.path("hash").asText();
        String running = HelpersCore.text("toolctx_idem_running", hash, in.path("owner").asText());
        String done = HelpersCore.text("toolctx_idem_done", hash, in.path("result_json").asText());
        ObjectNode out = obj();
        out.set("claim", redisArgs("claim", key, running, in.path("lease_ms").asLong()));
        out.set("read", redisArgs("read", key, "", 0));
        out.set("complete", redisArgs("complete", key, done, in.path("ttl_ms").asLong()));
        out.set("release", redisArgs("release", key, running, 0));
        return out;
    }

    /** A reply's bytes: {@code value_hex}, a string's UTF-8, or an integer's decimal text. */
    private static byte[] replyValue(JsonNode reply) {
        if (reply.hasNonNull("value_hex")) return HexFormat.of().parseHex(reply.get("value_hex").asText());
        JsonNode v = reply.get("value");
        if (v == null || v.isNull()) return new byte[0];
        return (v.isTextual() ? v.asText() : v.toString()).getBytes(StandardCharsets.UTF_8);
    }

    private static ObjectNode idemRedisReply(JsonNode in) {
        JsonNode reply = in.path("reply");
        byte[] value = replyValue(reply);
        String means = HelpersCore.text("toolctx_idem_redis_meaning", in.path("command").asText(), reply.path("type").asText(), value);
        ObjectNode out = obj().put("meaning", means);
        if (means.equals("held")) out.put("held", new String(value, StandardCharsets.UTF_8)).put("held_hex", HexFormat.of().formatHex(value));
        return out;
    }

    private static ObjectNode defaults(JsonNode in) {
        JsonNode d = HelpersCore.defaults();
        ObjectNode out = obj();
        String[][] names = {{"ttl_ms", "ttlMs"}, {"lease_ms", "leaseMs"}, {"wait_ms", "waitMs"}, {"memory_entries", "memoryEntries"},
            {"store_timeout_ms", "storeTimeoutMs"}, {"claim_rounds", "claimRounds"}, {"key_prefix", "keyPrefix"},
            {"release_script", "releaseScript"}, {"replayed_key", "replayed"}, {"outcome_key", "outcomeKey"}};
        for (String[] n : names) out.set(n[0], d.get(n[1]));
        out.put("first_pause_ms", HelpersCore.waitMs(0, 1_000_000_000L, 0));
        out.put("max_pause_ms", HelpersCore.waitMs(0, 1_000_000_000L, 60));
        return out;
    }

    private static ObjectNode replayClaim(JsonNode in) {
        byte[][] fields = {Fields.utf8(in.path("prefix").asText()), Fields.utf8(in.path("jti").asText())};
        List<byte[]> args = Verifier.plain(w -> Fields.decode(Verifier.text(
                w.call("toolctx_redis_claim_args", fields, in.path("until").asLong(), in.path("now").asLong())), 0));
        ArrayNode out = JSON.createArrayNode();
        for (byte[] a : args) out.add(Fields.text(a));
        ObjectNode o = obj();
        o.set("args", out);
        return o;
    }

    private static ObjectNode replayReply(JsonNode in) {
        JsonNode reply = in.path("reply");
        byte[][] fields = {Fields.utf8(reply.path("type").asText()), replyValue(reply)};
        return obj().put("answer", Fields.text(Verifier.plain(w -> Verifier.text(w.call("toolctx_redis_claim_answer", fields)))));
    }

    private static ObjectNode resultLimits(JsonNode in) {
        StringBuilder text = new StringBuilder();
        for (JsonNode part : in.path("result_json_parts")) text.append(part.get(0).asText().repeat(part.get(1).asInt()));
        return coreAnswer(v -> {
            ArrayNode findings = JSON.createArrayNode();
            for (LimitFinding f : ResultLimits.checkResult(text.toString())) {
                ObjectNode o = findings.addObject().put("code", f.code()).put("message", f.message())
                        .put("size", f.size()).put("limit", f.limit());
                f.index().ifPresent(i -> o.put("index", i));
            }
            ObjectNode out = obj();
            out.set("findings", findings);
            return out;
        });
    }

    /**
     * Drives a coalescer as {@link Progress} does, on a clock whose timers
     * fire only when an event's time passes theirs (a timer before an event
     * at the same time): what the core answered each event, what was sent when.
     */
    private static ObjectNode progress(JsonNode in) {
        Coalescer c = new Coalescer(in.path("interval_ms").asLong());
        ArrayNode answers = JSON.createArrayNode();
        ArrayNode sent = JSON.createArrayNode();
        long[] clock = {0, -1}; // now, the armed timer (-1: none)
        Function<String, String> apply = answer -> {
            if (answer.startsWith("s")) {
                clock[1] = -1;
                JsonNode r = parse(answer.substring(1));
                ObjectNode s = sent.addObject().put("at", clock[0]);
                s.set("progress", r.get("progress"));
                s.set("total", r.has("total") ? r.get("total") : JSON.nullNode());
                s.set("message", r.has("message") ? r.get("message") : JSON.nullNode());
                return "send";
            }
            if (answer.startsWith("a") || answer.startsWith("w")) clock[1] = Long.parseLong(answer.substring(1));
            if (answer.startsWith("a") || answer.startsWith("h")) return "hold";
            if (answer.startsWith("d")) return "drop:" + answer.substring(1);
            return answer.isEmpty() ? "none" : answer;
        };
        try {
            for (JsonNode ev : in.path("events")) {
                advance(c, clock, ev.path("at").asLong(), apply);
                if (ev.has("report")) {
                    JsonNode r = ev.get("report");
                    answers.add(apply.apply(c.report(clock[0], r.get(0).asDouble(),
                            r.get(1).isNull() ? Double.NaN : r.get(1).asDouble(), r.get(2).isNull() ? null : r.get(2).asText())));
                } else if (ev.path("flush").asBoolean()) {
                    answers.add(apply.apply(c.flush(clock[0])));
                } else {
                    c.close();
                    clock[1] = -1;
                    answers.add("closed");
                }
            }
            advance(c, clock, Long.MAX_VALUE / 2, apply);
        } finally {
            c.free();
        }
        ObjectNode out = obj();
        out.set("answers", answers);
        out.set("sent", sent);
        return out;
    }

    private static void advance(Coalescer c, long[] clock, long to, Function<String, String> apply) {
        while (clock[1] >= 0 && clock[1] <= to) {
            clock[0] = clock[1];
            clock[1] = -1;
            apply.apply(c.tick(clock[0]));
        }
        clock[0] = to;
    }
}

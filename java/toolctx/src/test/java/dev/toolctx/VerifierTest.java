package dev.toolctx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.common.McpTransportContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** The verifier on the public vector files' requests (tests/vectors), through the embedded module. */
class VerifierTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final JsonNode VALID = read("valid.json");

    static JsonNode read(String name) {
        try {
            return JSON.readTree(Files.readString(Path.of("../../tests/vectors", name)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A case's request. */
    record Req(String method, List<Header> headers, byte[] body) {}

    static Req request(JsonNode c) {
        List<Header> headers = new ArrayList<>();
        for (JsonNode h : c.path("request").path("headers")) headers.add(new Header(h.get(0).asText(), h.get(1).asText()));
        return new Req(c.path("request").path("method").asText("POST"), headers, c.path("request").path("body").asText().getBytes(StandardCharsets.UTF_8));
    }

    static VerifierOptions options() {
        return VerifierOptions.fromCoreConfig(VALID.get("config").toString());
    }

    static long now() {
        return VALID.get("now").asLong();
    }

    static Verdict verify(Verifier v, JsonNode c) {
        Req r = request(c);
        return v.verify(r.method(), r.headers(), r.body(), now());
    }

    @Test
    void acceptsTheValidCasesWithTheirContext() {
        Verifier v = Verifier.create(options());
        int accepted = 0;
        for (JsonNode c : VALID.get("cases")) {
            if (c.has("config") || c.has("now")) continue;
            Verdict verdict = verify(v, c);
            assertEquals(Verdict.Outcome.ACCEPT, verdict.outcome(), c.get("name").asText());
            ToolContext ctx = verdict.context().orElseThrow();
            assertEquals(c.path("expect").path("context").path("task_id").asText(), ctx.taskId());
            accepted++;
        }
        assertTrue(accepted > 3, "ran " + accepted + " cases");
    }

    @Test
    void refusesAnExpiredCallAsTheCoreRendersIt() {
        Verifier v = Verifier.create(options());
        JsonNode c = VALID.get("cases").get(0);
        Req r = request(c);
        Verdict verdict = v.verify(r.method(), r.headers(), r.body(), now() + 100_000);
        Refusal refusal = verdict.refusal().orElseThrow();
        assertEquals(401, refusal.status());
        assertEquals("token_expired", refusal.reason());
        assertTrue(refusal.body().contains("\"reason\":\"token_expired\""), refusal.body());
    }

    @Test
    void includeReasonFalseLeavesTheReasonOut() {
        Verifier v = Verifier.create(options().includeReason(false));
        Req r = request(VALID.get("cases").get(0));
        Refusal refusal = v.verify(r.method(), r.headers(), r.body(), now() + 100_000).refusal().orElseThrow();
        assertFalse(refusal.body().contains("token_expired"), refusal.body());
    }

    @Test
    void aBadConfigurationThrowsTheCoresCodeWithoutTheSecret() {
        ObjectNode config = (ObjectNode) VALID.get("config").deepCopy();
        config.put("no_such_setting", 1);
        ToolctxException e = assertThrows(ToolctxException.class, () -> Verifier.create(VerifierOptions.fromCoreConfig(config.toString())));
        assertEquals("config_unknown_setting", e.code());
        ToolctxException short_ = assertThrows(ToolctxException.class, () -> Verifier.create(VerifierOptions.builder()
                .instanceId(config.get("instance_id").asText()).secrets(List.of("too-short-secret"))));
        assertFalse(short_.getMessage().contains("too-short-secret"));
        assertFalse(Verifier.create(options()).toString().contains(config.get("secrets").get(0).asText()));
    }

    @Test
    void theCoreReadsTheConfigurationTextAsWritten() {
        String valid = VALID.get("config").toString();
        // A duplicate member (Jackson would keep the last one), an array, not JSON: the core's refusal, setter or not.
        String twice = "{\"instance_id\":\"other\"," + valid.substring(1);
        for (String text : List.of(twice, "[]", "nope")) {
            for (VerifierOptions o : List.of(VerifierOptions.fromCoreConfig(text), VerifierOptions.fromCoreConfig(text).maxBodyBytes(1000))) {
                assertEquals("config_not_json", assertThrows(ToolctxException.class, () -> Verifier.create(o)).code(), text);
            }
        }
    }

    @Test
    void maxTokenBytesIsTheCoresAndALargerTokenIsRefused() {
        assertEquals(20_000, Verifier.create(options().maxTokenBytes(20_000)).maxTokenBytes());
        Verifier v = Verifier.create(options());
        int max = v.maxTokenBytes();
        assertTrue(max > 0, "max_token_bytes " + max);
        // The first valid case with its token replaced by one byte too many.
        Req r = request(VALID.get("cases").get(0));
        List<Header> headers = new ArrayList<>();
        for (Header h : r.headers()) headers.add(h.value().startsWith("eyJ") ? new Header(h.name(), "a".repeat(max + 1)) : h);
        Refusal refusal = v.verify(r.method(), headers, r.body(), now()).refusal().orElseThrow();
        assertEquals("token_too_large", refusal.reason());
    }

    @Test
    void checkHeadersRefusesAMissingCredentialBeforeTheBody() {
        Verifier v = Verifier.create(options().credential("authorization", List.of("Bearer s3cret")));
        Verdict head = v.checkHeaders("POST", List.of(new Header("content-type", "application/json")));
        assertEquals("credential_missing", head.refusal().orElseThrow().reason());
        Verdict ok = v.checkHeaders("POST", List.of(new Header("Authorization", "Bearer s3cret")));
        assertEquals(Verdict.Outcome.READ_BODY, ok.outcome());
        assertEquals(Verdict.Outcome.PASS, v.checkHeaders("GET", List.of()).outcome());
    }

    @Test
    void forwardNamesTheHeadersToRemoveAndSet() {
        JsonNode file = read("forward.json");
        Verifier v = Verifier.create(VerifierOptions.fromCoreConfig(file.get("config").toString()));
        assertTrue(v.removedHeaders().contains("x-session-id"), v.removedHeaders().toString());
        JsonNode c = file.get("cases").get(0);
        Req r = request(c);
        Verdict verdict = v.verify(r.method(), r.headers(), r.body(), file.get("now").asLong());
        String key = c.path("expect").path("forward").path("x-idempotency-key").asText();
        assertTrue(verdict.set().contains(new Header("x-idempotency-key", key)), verdict.set().toString());
    }

    @Test
    void theMemoryGuardsCapacityIsTheCoresToRead() {
        // 0 is the core's default; 1 to 4294967295 itself.
        for (long ok : new long[] {0, 1, 4294967295L}) Verifier.create(options().memoryReplayGuard(ok));
        // Anything else is refused with the core's code and message (a
        // check of Java's own would answer another message).
        for (long refused : new long[] {-1, 4294967296L, Long.MIN_VALUE, Long.MAX_VALUE}) {
            ToolctxException e = assertThrows(ToolctxException.class, () -> Verifier.create(options().memoryReplayGuard(refused)));
            assertEquals("limit_out_of_range", e.code());
            assertEquals("setting `replay_capacity` is out of range", e.getMessage());
        }
    }

    @Test
    void theRedisStoresTimeoutIsTheCoresToRead() {
        // 0 is the core's default; 1 to 60,000 ms itself.
        assertEquals(500, Verifier.redisTimeoutMs(0));
        for (long ok : new long[] {1, 250, 60000}) assertEquals(ok, Verifier.redisTimeoutMs(ok));
        // Refused before the connection is touched, with the core's code and message.
        for (long refused : new long[] {-1, 60001, Long.MIN_VALUE, Long.MAX_VALUE}) {
            for (Executable make : List.<Executable>of(
                    () -> RedisReplayStore.create(null, "p:", refused), () -> RedisIdempotencyStore.create(null, "p:", refused))) {
                ToolctxException e = assertThrows(ToolctxException.class, make);
                assertEquals("limit_out_of_range", e.code());
                assertEquals("setting `store_timeout_ms` is out of range", e.getMessage());
            }
        }
    }

    @Test
    void theMemoryGuardRefusesTheSecondUseAcrossThreads() throws Exception {
        Verifier v = Verifier.create(options().memoryReplayGuard(0));
        JsonNode c = VALID.get("cases").get(0);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<Verdict>> all = new ArrayList<>();
        for (int i = 0; i < 32; i++) all.add(pool.submit(() -> verify(v, c)));
        int accepted = 0;
        for (Future<Verdict> f : all) {
            Verdict verdict = f.get();
            if (verdict.outcome() == Verdict.Outcome.ACCEPT) accepted++;
            else assertEquals("token_replayed", verdict.refusal().orElseThrow().reason());
        }
        pool.shutdown();
        assertEquals(1, accepted);
    }

    @Test
    void theStoresAnswerIsTheCoresToRead() {
        JsonNode c = VALID.get("cases").get(0);
        Map<String, String> reasons = new ConcurrentHashMap<>();
        for (String answer : List.of("used", "full", "failed", "nonsense")) {
            Verifier v = Verifier.create(options().replayStore((jti, until, now) -> answer));
            reasons.put(answer, verify(v, c).refusal().orElseThrow().reason());
        }
        assertEquals("token_replayed", reasons.get("used"));
        assertEquals("replay_guard_full", reasons.get("full"));
        assertEquals("internal_error", reasons.get("failed"));
        assertEquals("internal_error", reasons.get("nonsense"));
        Verifier throwing = Verifier.create(options().replayStore((jti, until, now) -> {
            throw new IllegalStateException("down");
        }));
        assertEquals("internal_error", verify(throwing, c).refusal().orElseThrow().reason());
        AtomicInteger asked = new AtomicInteger();
        Verifier first = Verifier.create(options().replayStore((jti, until, now) -> {
            asked.incrementAndGet();
            return "first_use";
        }));
        assertEquals(Verdict.Outcome.ACCEPT, verify(first, c).outcome());
        assertEquals(1, asked.get());
    }

    @Test
    void manyThreadsAgreeWithOneThread() throws Exception {
        Verifier v = Verifier.create(options());
        List<String> alone = new ArrayList<>();
        List<JsonNode> cases = new ArrayList<>();
        for (String f : List.of("valid.json", "token.json", "json.json")) {
            JsonNode file = read(f);
            for (JsonNode c : file.get("cases")) {
                if (c.has("config") || c.has("now") || !file.get("config").equals(VALID.get("config"))) continue;
                cases.add(c);
                alone.add(verify(v, c).toString());
            }
        }
        assertTrue(cases.size() > 20, "cases: " + cases.size());
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<String>> all = new ArrayList<>();
        for (int round = 0; round < 4; round++) {
            for (JsonNode c : cases) all.add(pool.submit(() -> verify(v, c).toString()));
        }
        for (int i = 0; i < all.size(); i++) assertEquals(alone.get(i % cases.size()), all.get(i).get());
        pool.shutdown();
    }

    @Test
    void toolContextThrowsWithoutTheFilter() {
        ToolctxException missing = assertThrows(ToolctxException.class, () -> ToolContext.from(McpTransportContext.EMPTY));
        assertEquals("filter_missing", missing.code());
        McpTransportContext passed = McpTransportContext.create(Map.of(ToolContext.JUDGED, "PASS"));
        assertEquals("no_context", assertThrows(ToolctxException.class, () -> ToolContext.from(passed)).code());
        Verdict verdict = verify(Verifier.create(options()), VALID.get("cases").get(0));
        ToolContext ctx = verdict.context().orElseThrow();
        assertSame(ctx, ToolContext.from(McpTransportContext.create(Map.of(ToolContext.ATTRIBUTE, ctx))));
    }
}

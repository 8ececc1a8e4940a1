package dev.toolctx.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.toolctx.ToolctxFilter;
import dev.toolctx.Verifier;
import dev.toolctx.VerifierOptions;
import dev.toolctx.example.JavaServer;
import dev.toolctx.example.Recorder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.server.Server;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The example server on 127.0.0.1 behind ToolctxFilter serves both protocol
 * eras on one endpoint (2025-11-25 through java-sdk's 2025-era transport,
 * 2026-07-28 through its modern server), over raw HTTP so that the wire is
 * what is checked: the verified context reaches both, a call without a token
 * is refused in front of both, and create_invoice answered at one revision
 * and retried at the other is replayed by the core for the retry's revision
 * (resultType exactly at 2026-07-28), never run again.
 */
class BothRevisionsTest {
    static final String LEGACY = "2025-11-25";
    static final String MODERN = "2026-07-28";
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    static Server stateless;
    static Server sessions;
    static Path record;

    @BeforeAll
    static void start() throws Exception {
        Verifier verifier = Verifier.create(VerifierOptions.builder().instanceId(SdkClientCheck.INSTANCE).secrets(List.of(SdkClientCheck.SECRET)));
        record = Files.createTempFile("both-revisions", ".jsonl");
        stateless = JavaServer.start(0, List.of(new ToolctxFilter(verifier)), null, new Recorder(record.toString()), true);
        sessions = JavaServer.start(0, List.of(new ToolctxFilter(verifier)), null, null, false);
    }

    @AfterAll
    static void stop() throws Exception {
        stateless.stop();
        sessions.stop();
        Files.deleteIfExists(record);
    }

    /** create_invoice's runs so far (--record's lines). */
    static long invoiceRuns() throws Exception {
        return Files.readAllLines(record).stream().filter(l -> l.contains("\"run\":\"create_invoice\"")).count();
    }

    record Answer(int status, JsonNode message) {
        JsonNode result() {
            return message.path("result");
        }
    }

    /**
     * One request at {@code revision}: a 2025-era stateless POST, or
     * 2026-07-28's headers and `_meta` (its Mcp-Method, Mcp-Name, protocol
     * version and capabilities) for any other revision; the JSON-RPC answer (JSON, or the SSE stream's message).
     */
    static Answer post(Server server, String revision, String method, ObjectNode params, String token) throws Exception {
        ObjectNode meta = params.has("_meta") ? (ObjectNode) params.get("_meta") : params.putObject("_meta");
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + JavaServer.port(server) + "/mcp"))
                .timeout(Duration.ofSeconds(30))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", revision);
        if (!revision.equals(LEGACY)) {
            meta.put("io.modelcontextprotocol/protocolVersion", revision);
            meta.putObject("io.modelcontextprotocol/clientCapabilities");
            req.header("mcp-method", method);
            if (params.has("name")) req.header("mcp-name", params.get("name").asText());
        }
        if (token != null) req.header("x-agentarea-context", token);
        ObjectNode doc = SdkClientCheck.JSON.createObjectNode().put("jsonrpc", "2.0").put("id", 7).put("method", method);
        doc.set("params", params);
        HttpResponse<String> r = HTTP.send(req.POST(HttpRequest.BodyPublishers.ofString(doc.toString())).build(), HttpResponse.BodyHandlers.ofString());
        String body = r.body();
        if (r.headers().firstValue("content-type").orElse("").startsWith("text/event-stream")) {
            for (String line : body.split("\n")) {
                if (line.startsWith("data:") && (line.contains("\"result\"") || line.contains("\"error\""))) body = line.substring(5);
            }
        }
        return new Answer(r.statusCode(), body.isBlank() ? SdkClientCheck.JSON.createObjectNode() : SdkClientCheck.JSON.readTree(body));
    }

    /** A tools/call with a fresh token; {@code meta} as SdkClientCheck.context made it (that call's claims). */
    static Answer call(String revision, String tool, Map<String, Object> meta, Map<String, Object> arguments) throws Exception {
        ObjectNode params = SdkClientCheck.JSON.createObjectNode().put("name", tool);
        params.set("arguments", SdkClientCheck.JSON.valueToTree(arguments));
        params.set("_meta", SdkClientCheck.JSON.valueToTree(meta));
        return post(stateless, revision, "tools/call", params, SdkClientCheck.token);
    }

    /** The first call's claims again, with a new token (the platform's retry). */
    static Map<String, Object> retry(Map<String, Object> meta) throws Exception {
        String task = (String) meta.get("agentarea/task_id");
        String call = (String) meta.get("agentarea/tool_call_id");
        long now = System.currentTimeMillis() / 1000;
        Map<String, Object> claims = new java.util.LinkedHashMap<>(Map.of("iss", "agentarea", "aud", SdkClientCheck.INSTANCE, "iat", now,
                "exp", now + 300, "jti", java.util.UUID.randomUUID().toString(), "tool", "create_invoice"));
        meta.forEach((k, v) -> claims.put(k.substring("agentarea/".length()), v));
        SdkClientCheck.token = SdkClientCheck.mint(claims);
        assertEquals(task + ":" + call, claims.get("idempotency_key"));
        return meta;
    }

    static int probeRuns(String revision) throws Exception {
        Answer a = call(revision, "toolctx_probe", SdkClientCheck.context("task-probe", "toolctx_probe"), Map.of());
        assertEquals(200, a.status(), a.message().toString());
        return a.result().path("structuredContent").path("runs").asInt(-1);
    }

    @Test
    void theModernServerAnswersDiscoverAndTheLegacyOneInitialize() throws Exception {
        Answer discover = post(sessions, MODERN, "server/discover", SdkClientCheck.JSON.createObjectNode(), null);
        assertEquals(200, discover.status(), discover.message().toString());
        assertTrue(discover.result().path("supportedVersions").toString().contains(MODERN), discover.message().toString());
        // A version neither serves goes to the modern server, which names the versions it supports.
        Answer unknown = post(sessions, "2099-01-01", "server/discover", SdkClientCheck.JSON.createObjectNode(), null);
        assertEquals(-32022, unknown.message().path("error").path("code").asInt(), unknown.message().toString());
        ObjectNode init = SdkClientCheck.JSON.createObjectNode().put("protocolVersion", LEGACY);
        init.putObject("capabilities");
        init.putObject("clientInfo").put("name", "test").put("version", "1");
        // An initialize carries no MCP-Protocol-Version yet: a 2025-era client's first request.
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + JavaServer.port(sessions) + "/mcp"))
                        .header("content-type", "application/json").header("accept", "application/json, text/event-stream")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":" + init + "}"))
                        .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"protocolVersion\":\"" + LEGACY + "\""), r.body());
        assertTrue(r.headers().firstValue("mcp-session-id").isPresent(), "a 2025-era session");
    }

    @ParameterizedTest
    @ValueSource(strings = {LEGACY, MODERN})
    void eachRevisionSeesTheVerifiedContextAndAToollessCallIsRefused(String revision) throws Exception {
        Answer who = call(revision, "whoami", SdkClientCheck.context("task-who", "whoami"), Map.of());
        assertEquals(200, who.status(), who.message().toString());
        assertEquals("task-who", who.result().path("structuredContent").path("context").path("task_id").asText(), who.message().toString());
        assertEquals(revision.equals(MODERN), who.result().has("resultType"), who.message().toString());
        int before = probeRuns(revision);
        Map<String, Object> meta = SdkClientCheck.context("task-none", "toolctx_probe");
        SdkClientCheck.token = null;
        Answer none = call(revision, "toolctx_probe", meta, Map.of());
        assertEquals(401, none.status(), none.message().toString());
        assertEquals("token_missing", none.message().path("error").path("data").path("reason").asText(), none.message().toString());
        assertEquals(before + 1, probeRuns(revision), "the refused call did not run");
    }

    @ParameterizedTest
    @ValueSource(strings = {LEGACY + ">" + MODERN, MODERN + ">" + LEGACY, MODERN + ">" + MODERN})
    void aRetryAtAnotherRevisionIsReplayedForIt(String revisions) throws Exception {
        String first = revisions.split(">")[0];
        String then = revisions.split(">")[1];
        long runsBefore = invoiceRuns();
        Map<String, Object> meta = SdkClientCheck.context("task-inv", "create_invoice");
        Answer a = call(first, "create_invoice", meta, Map.of("amount", 7));
        assertEquals(200, a.status(), a.message().toString());
        assertEquals(first.equals(MODERN), a.result().has("resultType"), a.message().toString());
        assertFalse(a.result().path("_meta").has("agentarea/replayed"), a.message().toString());
        Answer b = call(then, "create_invoice", retry(meta), Map.of("amount", 7));
        assertEquals(200, b.status(), b.message().toString());
        assertTrue(b.result().path("_meta").path("agentarea/replayed").asBoolean(), b.message().toString());
        assertEquals(then.equals(MODERN), b.result().has("resultType"), b.message().toString());
        if (then.equals(MODERN)) assertEquals("complete", b.result().path("resultType").asText());
        assertEquals(a.result().path("structuredContent"), b.result().path("structuredContent"));
        assertEquals(a.result().path("content"), b.result().path("content"));
        Answer conflict = call(then, "create_invoice", retry(meta), Map.of("amount", 8));
        assertTrue(conflict.result().path("isError").asBoolean(), conflict.message().toString());
        assertEquals("conflict", conflict.result().path("_meta").path("toolctx/idempotency").asText(), conflict.message().toString());
        assertEquals(runsBefore + 1, invoiceRuns(), "create_invoice ran once: the retry was replayed, the conflict refused");
    }
}

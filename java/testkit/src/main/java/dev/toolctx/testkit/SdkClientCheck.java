package dev.toolctx.testkit;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.toolctx.ToolctxFilter;
import dev.toolctx.Verifier;
import dev.toolctx.VerifierOptions;
import dev.toolctx.example.JavaServer;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.eclipse.jetty.server.Server;

/**
 * java-sdk's own client (2.2.0, HttpClientStreamableHttpTransport) against
 * the example server behind ToolctxFilter, on 127.0.0.1: each tools/call
 * gets a fresh token in X-AgentArea-Context (a request customizer, as the
 * platform adds it) and `_meta` from the same claims; tokens are minted
 * here (HMAC-SHA256, javax.crypto), the platform's side, never by toolctx.
 * Then java-sdk's 2026-07-28 client on the same endpoint ({@link #modern}).
 * Prints one line per check, then {@code N passed, N failed}.
 */
public final class SdkClientCheck {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String INSTANCE = "java-sdk-client-" + UUID.randomUUID();
    static final String SECRET = "java-sdk-client-secret-" + HexFormat.of().formatHex(new SecureRandom().generateSeed(16));
    static volatile String token;
    static int passed;
    static int failed;

    static void check(String what, boolean ok, Object detail) {
        if (ok) passed++;
        else failed++;
        System.out.println((ok ? "ok      " : "FAIL    ") + what + (ok ? "" : ": " + detail));
    }

    static String b64(byte[] b) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    static String mint(Map<String, Object> claims) throws Exception {
        String head = b64("{\"alg\":\"HS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8));
        String body = b64(JSON.writeValueAsBytes(claims));
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        return head + "." + body + "." + b64(mac.doFinal((head + "." + body).getBytes(StandardCharsets.UTF_8)));
    }

    /** A call's `_meta`, with a token for the same claims set for the next request. */
    static Map<String, Object> context(String task, String tool) throws Exception {
        String call = "call-" + UUID.randomUUID().toString().substring(0, 8);
        Map<String, Object> ctx = new LinkedHashMap<>();
        ctx.put("protocol", "1");
        ctx.put("task_id", task);
        ctx.put("tool_call_id", call);
        ctx.put("workspace_id", "ws-1");
        ctx.put("idempotency_key", task + ":" + call);
        long now = System.currentTimeMillis() / 1000;
        Map<String, Object> claims = new LinkedHashMap<>(Map.of("iss", "agentarea", "aud", INSTANCE, "iat", now, "exp", now + 300,
                "jti", UUID.randomUUID().toString(), "tool", tool));
        claims.putAll(ctx);
        token = mint(claims);
        Map<String, Object> meta = new LinkedHashMap<>();
        ctx.forEach((k, v) -> meta.put("agentarea/" + k, v));
        return meta;
    }

    static McpSchema.CallToolResult call(McpSyncClient client, String tool, Map<String, Object> meta) {
        if (meta == null) token = null;
        return client.callTool(McpSchema.CallToolRequest.builder().name(tool).arguments(Map.of()).meta(meta).build());
    }

    public static void main(String[] args) throws Exception {
        Verifier verifier = Verifier.create(VerifierOptions.builder().instanceId(INSTANCE).secrets(List.of(SECRET)));
        Server server = JavaServer.start(0, List.of(new ToolctxFilter(verifier)), null, null);
        String url = "http://127.0.0.1:" + JavaServer.port(server);
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport.builder(url)
                .endpoint("/mcp")
                .httpRequestCustomizer((builder, method, uri, body, ctx) -> {
                    String t = token;
                    if (t != null && body != null && body.contains("\"tools/call\"")) builder.header("X-AgentArea-Context", t);
                })
                .build();
        try (McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(20)).build()) {
            McpSchema.InitializeResult init = client.initialize();
            check("initialize (" + init.protocolVersion() + ")", init.protocolVersion() != null, init);
            McpSchema.CallToolResult r = call(client, "whoami", context("task-a", "whoami"));
            Object saw = r.structuredContent();
            String task = saw instanceof Map ? String.valueOf(((Map<?, ?>) ((Map<?, ?>) saw).get("context")).get("task_id")) : null;
            check("accepted, the tool sees the verified context", "task-a".equals(task), saw);
            int before = runs(call(client, "toolctx_probe", context("task-b", "toolctx_probe")));
            for (String[] refused : new String[][] {{"no token", null}, {"a token for another tool", "get_order"}}) {
                boolean threw;
                String detail;
                try {
                    detail = String.valueOf(call(client, "toolctx_probe", refused[1] == null ? null : context("task-c", refused[1])));
                    threw = false;
                } catch (RuntimeException e) {
                    detail = e.toString();
                    threw = true;
                }
                check(refused[0] + " is refused", threw, detail);
            }
            int after = runs(call(client, "toolctx_probe", context("task-d", "toolctx_probe")));
            check("no refused call ran (the probe ran once more)", after == before + 1, before + " -> " + after);
            modern(url);
        } finally {
            server.stop();
        }
        System.out.println(passed + " passed, " + failed + " failed");
        System.exit(failed == 0 && passed > 0 ? 0 : 1);
    }

    /**
     * java-sdk's 2026-07-28 client (its modern {@code McpSyncClient}) on the
     * same endpoint: discovery, the verified context, progress on the call's
     * stream, and a call without a token refused.
     */
    static void modern(String url) throws Exception {
        var transport = io.modelcontextprotocol.modern.client.transport.HttpClientMcpTransport.builder(url + "/mcp")
                .requestCustomizer(io.modelcontextprotocol.modern.client.transport.McpHttpRequestCustomizer.fromSync((request, headers, ctx) -> {
                    String t = token;
                    if (t != null && "tools/call".equals(request.mcpMethod())) headers.set("X-AgentArea-Context", t);
                }))
                .build();
        var client = io.modelcontextprotocol.modern.client.McpClient.sync(transport)
                .roundTimeout(Duration.ofSeconds(20)).callTimeout(Duration.ofSeconds(20)).build();
        var discovered = client.discover();
        check("2026-07-28: discovered (" + discovered.supportedVersions() + ")", discovered.supportedVersions().contains("2026-07-28"), discovered);
        var who = client.tool("whoami").meta(context("task-m", "whoami")).call();
        Object saw = who.structuredContent();
        String task = saw instanceof Map ? String.valueOf(((Map<?, ?>) ((Map<?, ?>) saw).get("context")).get("task_id")) : null;
        check("2026-07-28: accepted, the tool sees the verified context", "task-m".equals(task), saw);
        java.util.concurrent.atomic.AtomicInteger reports = new java.util.concurrent.atomic.AtomicInteger();
        var report = client.tool("export_report").arguments(Map.of("pages", 2)).progress(p -> reports.incrementAndGet())
                .meta(context("task-p", "export_report")).call();
        check("2026-07-28: progress on the call's stream (" + reports.get() + " reports)", reports.get() > 0 && !Boolean.TRUE.equals(report.isError()), report);
        Map<String, Object> claims = context("task-n", "toolctx_probe");
        token = null;
        boolean threw;
        String detail;
        try {
            detail = String.valueOf(client.tool("toolctx_probe").meta(claims).call());
            threw = false;
        } catch (RuntimeException e) {
            detail = e.toString();
            threw = true;
        }
        check("2026-07-28: no token is refused", threw, detail);
    }

    static int runs(McpSchema.CallToolResult r) {
        Object s = r.structuredContent();
        return s instanceof Map ? ((Number) ((Map<?, ?>) s).get("runs")).intValue() : -1;
    }
}

package dev.toolctx.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.toolctx.ToolContext;
import dev.toolctx.ToolctxFilter;
import dev.toolctx.Verifier;
import dev.toolctx.VerifierOptions;
import dev.toolctx.example.JavaServer;
import io.modelcontextprotocol.common.McpTransportContext;
import jakarta.servlet.Filter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.eclipse.jetty.server.Server;

/**
 * The vector runner of the Java front end (scripts/java-vectors; format:
 * docs/VECTORS.md): every case of the given files, sent over HTTP on
 * 127.0.0.1 through {@link ToolctxFilter} in front of the example's
 * java-sdk server (Jetty 12), the filter built from the case's
 * configuration and clock. A refusal is judged on the HTTP response the
 * filter wrote; a pass or an accept on what reached the server: the
 * context attribute, what java-sdk's context extractor handed on, the body
 * replayed byte for byte and, with {@code expect.forward}, the headers.
 * Prints the core's runtime ({@link Verifier#runtime}; the system property
 * {@code toolctx.expect.runtime} makes another one a failure), one line
 * per failed case, then {@code N passed, N failed}.
 */
public final class Vectors {
    /** The vector config names (CONTRACT §1) that are the verifier's; others are ignored, as the Rust runner does. */
    static final Set<String> OPTION_NAMES = Set.of(
            "instance_id", "secrets", "credential", "require_context", "clock_skew_s", "max_token_age_s",
            "max_body_bytes", "max_token_bytes", "protocol_majors", "forward");

    private volatile Filter current;
    private final Capture capture = new Capture();

    /** A server to run the cases against: the filters in order on every request, then the MCP transport; its port. */
    public interface Servers {
        Started start(List<Filter> filters, Consumer<McpTransportContext> extracted) throws Exception;
    }

    /** A started server: its port, and how to stop it. */
    public record Started(int port, AutoCloseable stop) {}

    public static void main(String[] args) throws Exception {
        run(args, (filters, extracted) -> {
            Server server = JavaServer.start(0, filters, extracted, null);
            return new Started(JavaServer.port(server), server::stop);
        });
    }

    /** Every case of the files through {@code servers}' server; exits 0 when all passed, 1 otherwise. */
    public static void run(String[] args, Servers servers) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: java-vectors FILE...");
            System.exit(2);
        }
        // The runtime the core ran on (scripts/test-java runs the vectors on
        // each): a run that expected another one fails.
        System.out.println("runtime: " + Verifier.runtime());
        String expected = System.getProperty("toolctx.expect.runtime");
        List<String> broken = new ArrayList<>();
        if (expected != null && !expected.equals(Verifier.runtime())) {
            broken.add("the core ran on " + Verifier.runtime() + ", not " + expected);
        }
        Vectors v = new Vectors();
        Filter front = (req, res, chain) -> v.current.doFilter(req, res, chain);
        Started server = servers.start(List.of(front, v.capture), v.capture::extracted);
        int port = server.port();
        int passed = 0;
        int failed = 0;
        try {
            for (String path : args) {
                JsonNode file;
                try {
                    file = ExactJson.read(Files.readString(Path.of(path)));
                } catch (Exception e) {
                    broken.add(path + ": " + e.getMessage());
                    continue;
                }
                if (!file.path("cases").isArray()) {
                    broken.add(path + ": no cases");
                    continue;
                }
                if (file.has("format")) {
                    // Another format (helpers, settings, memory store, store
                    // address), with its own runner: a note, not a failure.
                    System.out.println("skipped: " + path + ": \"format\": " + file.get("format") + " is not verdict vectors");
                    continue;
                }
                int i = 0;
                for (JsonNode c : file.get("cases")) {
                    String name = c.path("name").isTextual() ? c.get("name").asText() : "#" + i;
                    i++;
                    String failure;
                    try {
                        failure = v.run(file, c, port);
                    } catch (Exception e) {
                        failure = "error: " + e;
                    }
                    if (failure == null) passed++;
                    else {
                        failed++;
                        System.out.println(path + ": " + name + ": " + failure);
                    }
                }
            }
        } finally {
            server.stop().close();
        }
        for (String b : broken) System.out.println(b);
        if (passed + failed == 0 && broken.isEmpty()) broken.add("no cases ran");
        System.out.println(passed + " passed, " + (failed + broken.size()) + " failed");
        System.exit(failed == 0 && broken.isEmpty() && passed > 0 ? 0 : 1);
    }

    private static long clock(JsonNode n, long otherwise) {
        return ExactJson.isNum(n) && ExactJson.num(n).text().matches("\\d+") ? Long.parseLong(ExactJson.num(n).text()) : otherwise;
    }

    private String run(JsonNode file, JsonNode c, int port) throws Exception {
        if (c.has("expected") || "aivax".equals(file.path("profile").asText())) {
            return "this runner has no conventions to run this case";
        }
        ObjectNode config = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        for (JsonNode part : List.of(file.path("config"), c.path("config"))) {
            Iterator<Map.Entry<String, JsonNode>> it = part.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                if (OPTION_NAMES.contains(e.getKey())) config.set(e.getKey(), e.getValue());
            }
        }
        long now = clock(c.path("now"), clock(file.path("now"), 0));
        Verifier verifier;
        try {
            verifier = Verifier.create(VerifierOptions.fromCoreConfig(ExactJson.write(config)));
        } catch (Exception e) {
            return "config: " + e.getMessage();
        }
        current = new ToolctxFilter(verifier, () -> now);
        JsonNode req = c.path("request");
        String method = req.path("method").asText("POST");
        List<String[]> headers = new ArrayList<>();
        for (JsonNode h : req.path("headers")) headers.add(new String[] {h.get(0).asText(), h.get(1).asText()});
        byte[] body = req.has("body_b64")
                ? Base64.getDecoder().decode(req.get("body_b64").asText())
                : req.path("body").asText("").getBytes(StandardCharsets.UTF_8);
        capture.reset();
        RawHttp.Response response = RawHttp.send(port, method, headers, body);
        Capture.Seen seen = capture.seen();
        return Judge.judge(c.path("expect"), response, seen, body);
    }
}

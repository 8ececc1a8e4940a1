package dev.toolctx.testkit;

import dev.toolctx.ToolctxFilter;
import dev.toolctx.Verifier;
import dev.toolctx.VerifierOptions;
import dev.toolctx.example.JavaServer;
import dev.toolctx.internal.ReplayedBody;
import jakarta.servlet.Filter;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.eclipse.jetty.server.Server;

/**
 * The HTTP benchmark's server (bench/java.sh, not a test): the example's
 * java-sdk server (stateless) with nothing in front ({@code plain}), with
 * ToolctxFilter ({@code toolctx}), or with the hand-written java-jwt filter
 * ({@code hand}). TOOLCTX_INSTANCE_ID and TOOLCTX_SECRET as the example's.
 */
public final class BenchServer {
    public static void main(String[] args) throws Exception {
        String instance = System.getenv("TOOLCTX_INSTANCE_ID");
        String secret = System.getenv("TOOLCTX_SECRET");
        Filter front;
        switch (args[0]) {
            case "toolctx":
                front = new ToolctxFilter(Verifier.create(VerifierOptions.builder().instanceId(instance).secrets(List.of(secret))));
                break;
            case "hand":
                front = handWritten(secret, instance);
                break;
            default:
                front = (req, res, chain) -> chain.doFilter(req, res);
        }
        Server server = JavaServer.start(0, List.of(front), null, null, true);
        System.out.println("listening http://127.0.0.1:" + JavaServer.port(server) + "/mcp");
        System.out.flush();
        while (System.in.read() >= 0) {
            // Until standard input closes.
        }
        server.stop();
        System.exit(0);
    }

    /** What a Java developer would write: java-jwt on the header, Jackson on the body, the `_meta` binding; 401 otherwise. */
    static Filter handWritten(String secret, String instance) {
        HandWritten check = new HandWritten(secret, instance, java.time.Clock.systemUTC());
        return (request, response, chain) -> {
            HttpServletRequest req = (HttpServletRequest) request;
            byte[] body = req.getInputStream().readAllBytes();
            boolean ok;
            try {
                ok = check.verify(req.getHeader("x-agentarea-context"), body) != null;
            } catch (Exception e) {
                ok = false;
            }
            if (!ok) {
                HttpServletResponse res = (HttpServletResponse) response;
                res.setStatus(401);
                res.setContentType("application/json");
                res.getOutputStream().write("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32001,\"message\":\"refused\"}}".getBytes(StandardCharsets.UTF_8));
                return;
            }
            chain.doFilter(new HttpServletRequestWrapper(req) {
                @Override
                public ServletInputStream getInputStream() {
                    return new ReplayedBody(body);
                }
            }, response);
        };
    }

}

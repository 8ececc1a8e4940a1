package dev.toolctx.example;

import dev.toolctx.Idempotent;
import dev.toolctx.RedisIdempotencyStore;
import dev.toolctx.RedisReplayStore;
import dev.toolctx.ToolctxContextExtractor;
import dev.toolctx.ToolctxFilter;
import dev.toolctx.Verifier;
import dev.toolctx.VerifierOptions;
import io.lettuce.core.RedisClient;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.modern.server.feature.ToolsFeature;
import io.modelcontextprotocol.modern.server.transport.HttpServletMcpTransport;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.transport.DefaultServerTransportSecurityValidator;
import io.modelcontextprotocol.server.McpTransportContextExtractor;
import io.modelcontextprotocol.server.transport.HttpServletStatelessServerTransport;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * The example MCP server: java-sdk on embedded Jetty 12, behind
 * {@link ToolctxFilter}, with the Node example's tools
 * (examples/node-server/common.mjs), serving both protocol eras on one
 * endpoint: 2026-07-28 through java-sdk's modern server, 2025-11-25 and
 * earlier through its streamable HTTP (or stateless) transport. Options and
 * environment as the Node example's: see README.md beside this file.
 */
public final class JavaServer {
    private JavaServer() {}

    /** Process-wide, across requests: create_invoice's results (in Redis with --redis). */
    static volatile Idempotent invoices;

    /**
     * Jetty on 127.0.0.1:{@code port} (0: a free port), started: {@code filters}
     * in order on every request, then java-sdk's transport with
     * {@link ToolctxContextExtractor}; {@code seen} gets what the extractor
     * extracted (tests), {@code record} each tool run (or null).
     */
    public static Server start(int port, List<Filter> filters, Consumer<McpTransportContext> seen, Recorder record) throws Exception {
        return start(port, filters, seen, record, false);
    }

    /** As above; {@code stateless}: java-sdk's stateless transport (no sessions, no progress). */
    public static Server start(int port, List<Filter> filters, Consumer<McpTransportContext> seen, Recorder record, boolean stateless)
            throws Exception {
        McpJsonMapper mapper = McpJsonDefaults.getMapper();
        if (invoices == null) invoices = Idempotent.builder().build();
        // The request's headers too, for whoami and --record: java-sdk hands a
        // tool only the transport context.
        ToolctxContextExtractor extractor = new ToolctxContextExtractor(Tools.headers());
        McpTransportContextExtractor<HttpServletRequest> extract = request -> {
            McpTransportContext c = extractor.extract(request);
            if (seen != null) seen.accept(c);
            return c;
        };
        HttpServlet transport;
        List<String> legacyVersions;
        McpSchema.ServerCapabilities tools = McpSchema.ServerCapabilities.builder().tools(true).build();
        if (stateless) {
            HttpServletStatelessServerTransport t = HttpServletStatelessServerTransport.builder()
                    .jsonMapper(mapper).messageEndpoint("/mcp").contextExtractor(extract).build();
            McpServer.sync(t).serverInfo("toolctx-example", "1.0.0").capabilities(tools).tools(Tools.statelessTools(mapper, record, invoices)).build();
            transport = t;
            legacyVersions = t.protocolVersions();
        } else {
            HttpServletStreamableServerTransportProvider t = HttpServletStreamableServerTransportProvider.builder()
                    .jsonMapper(mapper).mcpEndpoint("/mcp").contextExtractor(extract).build();
            McpServer.sync(t).serverInfo("toolctx-example", "1.0.0").capabilities(tools).tools(Tools.sessionTools(mapper, record, invoices)).build();
            transport = t;
            legacyVersions = t.protocolVersions();
        }

        // 2026-07-28 on the same endpoint: java-sdk's modern server, the same tools.
        io.modelcontextprotocol.modern.server.McpServer modern = io.modelcontextprotocol.modern.server.McpServer.builder()
                .serverInfo(io.modelcontextprotocol.modern.McpSchema.Implementation.builder("toolctx-example", "1.0.0").build())
                .jsonMapper(mapper).feature(ToolsFeature.ofSync(ModernTools.tools(mapper, record, invoices))).build();
        // java-sdk's modern transport refuses any Origin it was not told to
        // allow (403); this server listens on the loopback only, and allows its
        // own origins, as a browser on this machine sends them.
        HttpServlet modernTransport = HttpServletMcpTransport.builder(modern).jsonMapper(mapper).endpoint("/mcp").contextExtractor(extract)
                .httpHeaderValidator(DefaultServerTransportSecurityValidator.builder()
                        .allowedOrigin("http://127.0.0.1:*").allowedOrigin("http://localhost:*").build())
                .build();
        HttpServlet byRevision = new ByRevision(modernTransport, transport, legacyVersions);

        Server server = new Server();
        // Room for a context token of max_token_bytes (8 KiB by default) and
        // the other headers: Jetty's default request head is 8 KiB in all.
        org.eclipse.jetty.server.HttpConfiguration http = new org.eclipse.jetty.server.HttpConfiguration();
        http.setRequestHeaderSize(64 * 1024);
        ServerConnector connector = new ServerConnector(server, new org.eclipse.jetty.server.HttpConnectionFactory(http));
        connector.setHost("127.0.0.1");
        connector.setPort(port);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        for (Filter f : filters) {
            FilterHolder holder = new FilterHolder(f);
            holder.setAsyncSupported(true);
            context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
        }
        ServletHolder servlet = new ServletHolder(byRevision);
        servlet.setAsyncSupported(true);
        context.addServlet(servlet, "/*");
        server.setHandler(context);
        server.start();
        return server;
    }

    /**
     * One endpoint, both eras: a request without {@code MCP-Protocol-Version}
     * (an {@code initialize}) or with a version the 2025-era transport serves
     * ({@code legacyVersions}, its {@code protocolVersions()}) goes to that
     * transport; any other to java-sdk's modern server, which serves
     * 2026-07-28 and answers another version with its
     * UnsupportedProtocolVersionError naming the versions it supports. The
     * filters ran before either.
     */
    static final class ByRevision extends HttpServlet {
        private final HttpServlet modern;
        private final HttpServlet legacy;
        private final List<String> legacyVersions;

        ByRevision(HttpServlet modern, HttpServlet legacy, List<String> legacyVersions) {
            this.modern = modern;
            this.legacy = legacy;
            this.legacyVersions = List.copyOf(legacyVersions);
        }

        @Override
        public void init(ServletConfig config) throws ServletException {
            super.init(config);
            modern.init(config);
            legacy.init(config);
        }

        @Override
        public void service(ServletRequest req, ServletResponse res) throws ServletException, IOException {
            String revision = ((HttpServletRequest) req).getHeader("MCP-Protocol-Version");
            (revision == null || legacyVersions.contains(revision) ? legacy : modern).service(req, res);
        }

        @Override
        public void destroy() {
            modern.destroy();
            legacy.destroy();
        }
    }

    public static int port(Server server) {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    /** The verifier from the environment, as the Node example builds it. */
    static Verifier verifier(Options o, RedisClient redis) {
        List<String> secrets = new ArrayList<>();
        secrets.add(System.getenv("TOOLCTX_SECRET"));
        String previous = System.getenv("TOOLCTX_SECRET_PREVIOUS");
        if (previous != null && !previous.isEmpty()) secrets.add(previous);
        VerifierOptions options = VerifierOptions.builder().instanceId(System.getenv("TOOLCTX_INSTANCE_ID")).secrets(secrets);
        String credential = System.getenv("TOOLCTX_CREDENTIAL");
        if (credential != null && !credential.isEmpty()) options.credential("authorization", List.of(credential));
        if (o.contextOptional) options.requireContext(false);
        if (o.tuix) options.forward(Map.of("tuix", true));
        if (redis != null) options.replayStore(RedisReplayStore.create(redis.connect()));
        // Throws naming the problem (never the secret) on a bad configuration.
        return Verifier.create(options);
    }

    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        RedisClient redis = o.redis == null ? null : RedisClient.create(o.redis);
        Recorder record = o.record == null ? null : new Recorder(o.record);
        if (redis != null) invoices = Idempotent.builder().store(RedisIdempotencyStore.create(redis.connect())).build();
        List<Filter> filters = new ArrayList<>();
        if (o.verify) filters.add(new ToolctxFilter(verifier(o, redis)));
        if (record != null) filters.add(record.filter());
        Server server = start(o.port, filters, null, record, o.stateless);
        String mode = !o.verify ? " (verification off)" : o.contextOptional ? " (context optional)" : "";
        System.out.println("listening http://127.0.0.1:" + port(server) + "/mcp" + mode);
        System.out.flush();
        if (o.exitWithStdin) {
            while (System.in.read() >= 0) {
                // Until standard input closes.
            }
            server.stop();
            System.exit(0);
        }
        server.join();
    }

}

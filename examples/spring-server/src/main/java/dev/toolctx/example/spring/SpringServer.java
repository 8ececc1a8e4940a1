package dev.toolctx.example.spring;

import dev.toolctx.Idempotent;
import dev.toolctx.RedisIdempotencyStore;
import dev.toolctx.ToolctxContextExtractor;
import dev.toolctx.example.Options;
import dev.toolctx.example.Recorder;
import dev.toolctx.example.Tools;
import dev.toolctx.spring.ToolctxAutoConfiguration;
import io.lettuce.core.RedisClient;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpStatelessServerFeatures;
import io.modelcontextprotocol.server.McpTransportContextExtractor;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * The example MCP server on Spring Boot and Spring AI (WebMvc): the tools
 * of examples/java-server (the Node example's), as Spring AI's tool
 * specifications; toolctx-spring puts the filter in front and the context
 * extractor in Spring AI's transport. The settings are in
 * application.properties; the command line is the Node example's (README.md
 * beside this file).
 */
@SpringBootApplication
public class SpringServer {

    /** The tools for Spring AI's streamable server (sessions, progress). */
    @Bean
    List<SyncToolSpecification> tools(Idempotent invoices, ObjectProvider<Recorder> record) {
        return Tools.sessionTools(McpJsonDefaults.getMapper(), record.getIfAvailable(), invoices);
    }

    /** The same tools for its stateless server ({@code spring.ai.mcp.server.protocol=STATELESS}, --stateless). */
    @Bean
    List<McpStatelessServerFeatures.SyncToolSpecification> statelessTools(Idempotent invoices, ObjectProvider<Recorder> record) {
        return Tools.statelessTools(McpJsonDefaults.getMapper(), record.getIfAvailable(), invoices);
    }

    /** --record FILE (example.record): what was handed on past toolctx, and each tool run (test drivers). */
    @Bean
    @ConditionalOnProperty("example.record")
    Recorder recorder(Environment env) throws IOException {
        return new Recorder(env.getProperty("example.record"));
    }

    /** The recorder's filter right behind toolctx's. */
    @Bean
    @ConditionalOnProperty("example.record")
    FilterRegistrationBean<Filter> recorderFilter(Recorder recorder) {
        FilterRegistrationBean<Filter> bean = new FilterRegistrationBean<>(recorder.filter());
        bean.addUrlPatterns("/*");
        bean.setOrder(Ordered.HIGHEST_PRECEDENCE + 1);
        bean.setAsyncSupported(true);
        return bean;
    }

    /** create_invoice's results: in Redis with toolctx.redis-url (toolctx-spring's client), else in this process. */
    @Bean
    Idempotent invoices(ObjectProvider<RedisClient> redis) {
        RedisClient client = redis.getIfAvailable();
        return client == null ? Idempotent.builder().build() : Idempotent.builder().store(RedisIdempotencyStore.create(client.connect())).build();
    }

    /** toolctx's extractor with the request's headers added, for whoami. */
    @Bean(ToolctxAutoConfiguration.CONTEXT_EXTRACTOR)
    @ConditionalOnMissingBean(name = ToolctxAutoConfiguration.CONTEXT_EXTRACTOR)
    McpTransportContextExtractor<HttpServletRequest> toolctxContextExtractor() {
        return new ToolctxContextExtractor(Tools.headers());
    }

    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        if (!o.verify) {
            // toolctx-spring never starts unguarded; examples/java-server has --no-verify.
            System.err.println("--no-verify: not in this example");
            System.exit(2);
        }
        ConfigurableApplicationContext context = SpringApplication.run(SpringServer.class, properties(o));
        System.out.println("listening " + url(context) + (o.contextOptional ? " (context optional)" : ""));
        System.out.flush();
        if (o.exitWithStdin) {
            while (System.in.read() >= 0) {
                // Until standard input closes.
            }
            System.exit(SpringApplication.exit(context));
        }
    }

    /**
     * The command line and the environment's extra settings as Spring
     * properties (command-line arguments: above application.properties).
     */
    static String[] properties(Options o) {
        List<String> p = new ArrayList<>();
        p.add("--server.port=" + o.port);
        String previous = System.getenv("TOOLCTX_SECRET_PREVIOUS");
        if (previous != null && !previous.isEmpty()) {
            // One list in one place: Spring does not merge a list across property sources.
            p.add("--toolctx.secrets[0]=" + System.getenv("TOOLCTX_SECRET"));
            p.add("--toolctx.secrets[1]=" + previous);
        }
        String credential = System.getenv("TOOLCTX_CREDENTIAL");
        if (credential != null && !credential.isEmpty()) {
            p.add("--toolctx.credential.header=authorization");
            p.add("--toolctx.credential.values[0]=" + credential);
        }
        if (o.contextOptional) p.add("--toolctx.require-context=false");
        if (o.tuix) p.add("--toolctx.forward={\"tuix\":true}");
        if (o.redis != null) p.add("--toolctx.redis-url=" + o.redis);
        if (o.record != null) p.add("--example.record=" + o.record);
        if (o.stateless) p.add("--spring.ai.mcp.server.protocol=STATELESS");
        return p.toArray(new String[0]);
    }

    static String url(ConfigurableApplicationContext context) {
        return "http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port")
                + context.getEnvironment().getProperty("spring.ai.mcp.server.streamable-http.mcp-endpoint", "/mcp");
    }

    /**
     * For the vector runner (java/testkit-spring): the app on 127.0.0.1:{@code port}
     * with {@code filters} in order in place of toolctx-spring's filter (each
     * vector case has its own configuration), {@code seen} getting what the
     * context extractor extracted. toolctx-spring's verifier is still built
     * from {@code args}' properties, and its transport wiring is the one tested.
     */
    public static ConfigurableApplicationContext start(int port, List<Filter> filters, Consumer<McpTransportContext> seen, String... args) {
        SpringApplication app = new SpringApplication(SpringServer.class);
        app.addInitializers(context -> {
            FilterRegistrationBean<Filter> front = new FilterRegistrationBean<>(chained(filters));
            front.addUrlPatterns("/*");
            front.setOrder(Ordered.HIGHEST_PRECEDENCE);
            front.setAsyncSupported(true);
            context.getBeanFactory().registerSingleton(ToolctxAutoConfiguration.FILTER_REGISTRATION, front);
            context.getBeanFactory().registerSingleton(ToolctxAutoConfiguration.CONTEXT_EXTRACTOR, new Seen(seen));
        });
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--server.port=" + port);
        return app.run(all.toArray(new String[0]));
    }

    private static Filter chained(List<Filter> filters) {
        Filter out = (req, res, chain) -> chain.doFilter(req, res);
        for (int i = filters.size() - 1; i >= 0; i--) {
            Filter f = filters.get(i);
            Filter next = out;
            out = (req, res, chain) -> f.doFilter(req, res, (r, s) -> next.doFilter(r, s, chain));
        }
        return out;
    }

    /** The example's extractor, telling {@code seen} what it extracted. */
    static final class Seen implements McpTransportContextExtractor<HttpServletRequest> {
        private final ToolctxContextExtractor inner = new ToolctxContextExtractor(Tools.headers());
        private final Consumer<McpTransportContext> seen;

        Seen(Consumer<McpTransportContext> seen) {
            this.seen = seen;
        }

        @Override
        public McpTransportContext extract(HttpServletRequest request) {
            McpTransportContext c = inner.extract(request);
            seen.accept(c);
            return c;
        }
    }
}

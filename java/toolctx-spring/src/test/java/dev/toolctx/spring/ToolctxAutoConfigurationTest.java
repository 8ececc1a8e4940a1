package dev.toolctx.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.toolctx.ToolContext;
import dev.toolctx.ToolctxException;
import dev.toolctx.ToolctxFilter;
import dev.toolctx.Verifier;
import dev.toolctx.VerifierOptions;
import jakarta.servlet.Filter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.server.autoconfigure.ServerProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.util.unit.DataSize;

/**
 * The auto-configuration in a real Spring Boot application (Tomcat on
 * 127.0.0.1, Spring AI's streamable WebMvc server): a bad or missing
 * configuration stops startup with the core's error, and the filter runs on
 * the MCP endpoint before every filter that reads the body.
 */
class ToolctxAutoConfigurationTest {
    static final String SECRET = "spring-auto-configuration-test-secret-0123456789";

    /** What the application's own body-reading filters saw, in the order they ran. */
    static final List<String> SEEN = new CopyOnWriteArrayList<>();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        /** Reads the body, right after the highest precedence. */
        @Bean
        FilterRegistrationBean<Filter> earlyReader() {
            FilterRegistrationBean<Filter> bean = new FilterRegistrationBean<>(reader("early"));
            bean.setOrder(Ordered.HIGHEST_PRECEDENCE + 1);
            return bean;
        }

        /** Reads the body, at the default order (a plain filter bean). */
        @Bean
        Filter lateReader() {
            return reader("late");
        }

        private static Filter reader(String name) {
            return (request, response, chain) -> {
                var judged = request.getAttribute(ToolContext.JUDGED);
                // Replayed by ToolctxFilter's wrapper when it ran first; gone otherwise.
                String body = new String(request.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                SEEN.add(name + " judged=" + judged + " body=" + body);
                chain.doFilter(request, response);
            };
        }
    }

    private static ConfigurableApplicationContext start(String... settings) {
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0", "--server.address=127.0.0.1", "--spring.main.banner-mode=off", "--logging.level.root=OFF"));
        if (Arrays.stream(settings).noneMatch(s -> s.startsWith("--spring.ai.mcp.server.protocol="))) {
            args.add("--spring.ai.mcp.server.protocol=STREAMABLE");
        }
        args.addAll(List.of(settings));
        return SpringApplication.run(App.class, args.toArray(new String[0]));
    }

    /** The cause of a failed startup that is toolctx's. */
    private static ToolctxException startupError(String... settings) {
        Throwable e = assertThrows(Throwable.class, () -> start(settings).close());
        while (e != null && !(e instanceof ToolctxException)) e = e.getCause();
        assertNotNull(e, "startup failed, but not with toolctx's error");
        return (ToolctxException) e;
    }

    @Test
    void noConfigurationStopsStartup() {
        assertEquals("config_missing", startupError().code());
    }

    @Test
    void theSseTransportStopsStartup() {
        assertEquals("transport_unsupported", startupError("--toolctx.instance-id=spring-test", "--toolctx.secrets[0]=" + SECRET,
                "--spring.ai.mcp.server.protocol=SSE").code());
    }

    @Test
    void aBadConfigurationStopsStartupWithTheCoresError() {
        ToolctxException e = startupError("--toolctx.instance-id=spring-test", "--toolctx.secrets[0]=too-short-secret");
        assertEquals("secret_length", e.code());
        assertFalse(e.getMessage().contains("too-short-secret"), e.getMessage());
        assertEquals("config_unknown_setting",
                startupError("--toolctx.core-config={\"instance_id\":\"x\",\"secrets\":[\"" + SECRET + "\"],\"no_such_setting\":1}").code());
        // A property reaches the core as the option it names.
        try (ConfigurableApplicationContext context = start("--toolctx.instance-id=spring-test", "--toolctx.secrets[0]=" + SECRET,
                "--toolctx.max-body-bytes=12345", "--toolctx.forward={\"tuix\":true}")) {
            assertEquals(12345, context.getBean(Verifier.class).maxBodyBytes());
        }
        // One source for the core's settings.
        assertEquals("config_conflict",
                startupError("--toolctx.core-config={\"instance_id\":\"x\",\"secrets\":[\"" + SECRET + "\"]}", "--toolctx.instance-id=y").code());
    }

    @Test
    void anUnresolvedPlaceholderStopsStartup() {
        // As the README's snippet with its variable unset: Spring leaves the text as it is.
        ToolctxException e = startupError("--toolctx.instance-id=${TOOLCTX_TEST_UNSET_INSTANCE_ID}", "--toolctx.secrets[0]=" + SECRET);
        assertEquals("config_placeholder", e.code());
        assertEquals("toolctx.instance-id: setting `instance_id` holds an unresolved placeholder `${...}`: set the variable it names",
                e.getMessage());
        assertEquals("config_placeholder",
                startupError("--toolctx.instance-id=spring-test", "--toolctx.secrets[0]=${TOOLCTX_TEST_UNSET_SECRET}").code());
    }

    @Test
    void theFilterRunsOnTheMcpEndpointBeforeAnythingReadsTheBody() throws Exception {
        try (ConfigurableApplicationContext context = start("--toolctx.instance-id=spring-test", "--toolctx.secrets[0]=" + SECRET)) {
            @SuppressWarnings("unchecked")
            FilterRegistrationBean<?> registration = context.getBean(ToolctxAutoConfiguration.FILTER_REGISTRATION, FilterRegistrationBean.class);
            assertInstanceOf(ToolctxFilter.class, registration.getFilter());
            assertEquals(Ordered.HIGHEST_PRECEDENCE, registration.getOrder());
            assertEquals(List.of("/mcp", "/mcp/*"), new ArrayList<>(registration.getUrlPatterns()));
            // Nothing set but the id and secret: every other setting is the core's default.
            Verifier plain = Verifier.create(VerifierOptions.builder().instanceId("spring-test").secrets(List.of(SECRET)));
            assertEquals(plain.maxBodyBytes(), context.getBean(Verifier.class).maxBodyBytes());

            String port = context.getEnvironment().getProperty("local.server.port");
            HttpClient http = HttpClient.newHttpClient();
            String call = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"whoami\",\"arguments\":{}}}";
            String list = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";

            // A call without a token: refused by the core, no other filter ran.
            SEEN.clear();
            HttpResponse<String> refused = http.send(post(port, call), HttpResponse.BodyHandlers.ofString());
            assertEquals(401, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("\"reason\":\"token_missing\""), refused.body());
            assertEquals(List.of(), SEEN);

            // tools/list passes: both readers ran after the filter, on the body it replayed.
            SEEN.clear();
            http.send(post(port, list), HttpResponse.BodyHandlers.ofString());
            assertEquals(List.of("early judged=PASS body=" + list, "late judged=PASS body=" + list), SEEN);
        }
    }

    @Test
    void aTokenOverMaxTokenBytesIsRefusedByTheCoreNotByTomcat() throws Exception {
        // Spring Boot's default head limit (8 KB) raised by max_token_bytes.
        try (ConfigurableApplicationContext context = start("--toolctx.instance-id=spring-test", "--toolctx.secrets[0]=" + SECRET)) {
            int max = context.getBean(Verifier.class).maxTokenBytes();
            ServerProperties server = context.getBean(ServerProperties.class);
            assertEquals(DataSize.ofKilobytes(8).toBytes() + max, server.getMaxHttpRequestHeaderSize().toBytes());
            String port = context.getEnvironment().getProperty("local.server.port");
            // One byte over max_token_bytes, and over Tomcat's default 8 KB head on its own.
            String token = "a".repeat(Math.max(max + 1, 9 * 1024));
            HttpRequest call = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/mcp"))
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("X-AgentArea-Context", token)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"whoami\",\"arguments\":{}}}"))
                    .build();
            HttpResponse<String> refused = HttpClient.newHttpClient().send(call, HttpResponse.BodyHandlers.ofString());
            assertEquals(401, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("\"reason\":\"token_too_large\""), refused.body());
        }
        // An application's own limit keeps its room for the other headers.
        try (ConfigurableApplicationContext context = start("--toolctx.instance-id=spring-test", "--toolctx.secrets[0]=" + SECRET,
                "--toolctx.max-token-bytes=10000", "--server.max-http-request-header-size=20KB")) {
            assertEquals(20 * 1024 + 10000, context.getBean(ServerProperties.class).getMaxHttpRequestHeaderSize().toBytes());
        }
    }

    private static HttpRequest post(String port, String body) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/mcp"))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
    }
}

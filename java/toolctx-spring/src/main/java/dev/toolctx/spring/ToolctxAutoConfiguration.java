package dev.toolctx.spring;

import dev.toolctx.RedisReplayStore;
import dev.toolctx.ReplayStore;
import dev.toolctx.ToolctxContextExtractor;
import io.modelcontextprotocol.server.McpTransportContextExtractor;
import jakarta.servlet.http.HttpServletRequest;
import dev.toolctx.ToolctxFilter;
import dev.toolctx.Verifier;
import io.lettuce.core.RedisClient;
import org.springframework.ai.mcp.server.common.autoconfigure.properties.McpServerStreamableHttpProperties;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.server.autoconfigure.ServerProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.util.unit.DataSize;

/**
 * toolctx in front of Spring AI's MCP server (WebMvc): the {@link Verifier}
 * from {@code toolctx.*} ({@link ToolctxProperties}; a bad configuration
 * fails startup with the core's error, and so does none at all), the
 * {@link ToolctxFilter} on the MCP endpoint before every other filter, and
 * the replay guard in Redis when {@code toolctx.redis-url} is set (or the
 * application's own {@link ReplayStore} bean).
 * {@link ToolctxMcpTransportConfiguration} gives Spring AI's transport the
 * context extractor.
 *
 * <p>Each bean backs off when the application defines its own.
 */
@AutoConfiguration(beforeName = {
    "org.springframework.ai.mcp.server.webmvc.autoconfigure.McpServerStreamableHttpWebMvcAutoConfiguration",
    "org.springframework.ai.mcp.server.webmvc.autoconfigure.McpServerStatelessWebMvcAutoConfiguration"
})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = "org.springframework.ai.mcp.server.webmvc.transport.WebMvcStreamableServerTransportProvider")
@EnableConfigurationProperties({ToolctxProperties.class, McpServerStreamableHttpProperties.class})
@Import(ToolctxMcpTransportConfiguration.class)
public class ToolctxAutoConfiguration {

    /** The name of the filter's registration: define a bean by this name to register the filter yourself. */
    public static final String FILTER_REGISTRATION = "toolctxFilterRegistration";

    /** The name of the context extractor: define a bean by this name (a {@link ToolctxContextExtractor} with your own inside) to add entries. */
    public static final String CONTEXT_EXTRACTOR = "toolctxContextExtractor";

    @Bean(CONTEXT_EXTRACTOR)
    @ConditionalOnMissingBean(name = CONTEXT_EXTRACTOR)
    public McpTransportContextExtractor<HttpServletRequest> toolctxContextExtractor() {
        return new ToolctxContextExtractor();
    }

    /** Throws the core's configuration error: the application does not start unguarded. */
    @Bean
    @ConditionalOnMissingBean
    public Verifier toolctxVerifier(ToolctxProperties properties, ObjectProvider<ReplayStore> store) {
        ReplayStore shared = store.getIfAvailable();
        if (properties.redisUrl() != null && shared == null) {
            throw new IllegalStateException("toolctx.redis-url is set but lettuce-core is not on the classpath");
        }
        return Verifier.create(ToolctxOptions.from(properties, shared));
    }

    /**
     * On the MCP endpoint ({@code spring.ai.mcp.server.streamable-http.mcp-endpoint}),
     * first: nothing may read the body before the filter does.
     */
    @Bean(FILTER_REGISTRATION)
    @ConditionalOnMissingBean(name = FILTER_REGISTRATION)
    public FilterRegistrationBean<ToolctxFilter> toolctxFilterRegistration(Verifier verifier, McpServerStreamableHttpProperties mcp) {
        FilterRegistrationBean<ToolctxFilter> bean = new FilterRegistrationBean<>(new ToolctxFilter(verifier));
        String endpoint = mcp.getMcpEndpoint();
        bean.addUrlPatterns(endpoint, endpoint.endsWith("/") ? endpoint + "*" : endpoint + "/*");
        bean.setOrder(Ordered.HIGHEST_PRECEDENCE);
        bean.setAsyncSupported(true);
        bean.setName("toolctx");
        return bean;
    }

    /**
     * Room for the context token in the servlet container's request head:
     * {@code server.max-http-request-header-size} (the limit on the request
     * line and every header together; Spring Boot's default is 8 KB, which a
     * token near the core's default {@code max_token_bytes} alone would
     * fill) is raised by the verifier's {@code max_token_bytes}, so the
     * other headers keep the whole limit the application set for them and
     * a token over {@code max_token_bytes} still reaches the filter and is
     * refused {@code token_too_large} (401, JSON-RPC), not by the container's
     * own 400 page. A limit of 0 or less (the container's own) is left alone.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ServerProperties.class)
    static class RequestHead {
        @Bean
        static BeanPostProcessor toolctxRequestHeadRoom(ObjectProvider<Verifier> verifier) {
            return new BeanPostProcessor() {
                @Override
                public Object postProcessAfterInitialization(Object bean, String name) {
                    if (bean instanceof ServerProperties server) {
                        DataSize head = server.getMaxHttpRequestHeaderSize();
                        if (head != null && head.toBytes() > 0) {
                            server.setMaxHttpRequestHeaderSize(DataSize.ofBytes(head.toBytes() + verifier.getObject().maxTokenBytes()));
                        }
                    }
                    return bean;
                }
            };
        }
    }

    /** The replay guard in Redis through Lettuce, shared with the other replicas and toolctx front ends. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(RedisClient.class)
    static class Redis {
        /** {@code toolctx.redis-url}: a client of our own, shut down with the context. */
        @Bean(destroyMethod = "shutdown")
        @ConditionalOnProperty("toolctx.redis-url")
        @ConditionalOnMissingBean(ReplayStore.class)
        RedisClient toolctxRedisClient(ToolctxProperties properties) {
            return RedisClient.create(properties.redisUrl());
        }

        @Bean
        @ConditionalOnProperty("toolctx.redis-url")
        @ConditionalOnMissingBean(ReplayStore.class)
        ReplayStore toolctxRedisReplayStore(RedisClient toolctxRedisClient) {
            return RedisReplayStore.create(toolctxRedisClient.connect());
        }
    }
}

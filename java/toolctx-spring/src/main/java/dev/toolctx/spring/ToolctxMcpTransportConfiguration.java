package dev.toolctx.spring;

import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpTransportContextExtractor;
import dev.toolctx.ToolctxException;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.ai.mcp.server.common.autoconfigure.McpServerAutoConfiguration;
import org.springframework.ai.mcp.server.common.autoconfigure.McpServerStatelessAutoConfiguration;
import org.springframework.ai.mcp.server.common.autoconfigure.McpServerStdioDisabledCondition;
import org.springframework.ai.mcp.server.common.autoconfigure.properties.McpServerProperties;
import org.springframework.ai.mcp.server.common.autoconfigure.properties.McpServerStreamableHttpProperties;
import org.springframework.ai.mcp.server.webmvc.transport.WebMvcStatelessServerTransport;
import org.springframework.ai.mcp.server.webmvc.transport.WebMvcStreamableServerTransportProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.function.ServerRequest;
import tools.jackson.databind.json.JsonMapper;

/**
 * Spring AI's WebMvc transports (streamable and stateless) built as its own
 * auto-configuration builds them (McpServerStreamableHttpWebMvcAutoConfiguration,
 * McpServerStatelessWebMvcAutoConfiguration: the same properties, under the
 * same conditions), plus the one thing it has no property for: the context
 * extractor that copies {@link dev.toolctx.ToolctxFilter}'s verdict into the
 * MCP transport context. Spring AI's beans back off (they are
 * {@code @ConditionalOnMissingBean} and come after these). The SSE transport
 * has no place for the extractor: with it, startup stops rather than serve
 * tools that would run without their verified context.
 */
@Configuration(proxyBeanMethods = false)
class ToolctxMcpTransportConfiguration {

    /** Spring AI hands its transport a {@link ServerRequest}; the filter left its verdict on the servlet request under it. */
    static McpTransportContextExtractor<ServerRequest> onServerRequest(McpTransportContextExtractor<HttpServletRequest> extractor) {
        return request -> extractor.extract(request.servletRequest());
    }

    @Bean
    @ConditionalOnMissingBean
    @Conditional({McpServerStdioDisabledCondition.class, McpServerAutoConfiguration.EnabledStreamableServerCondition.class})
    WebMvcStreamableServerTransportProvider webMvcStreamableServerTransportProvider(
            @Qualifier("mcpServerJsonMapper") JsonMapper jsonMapper, McpServerStreamableHttpProperties properties,
            @Qualifier(ToolctxAutoConfiguration.CONTEXT_EXTRACTOR) McpTransportContextExtractor<HttpServletRequest> extractor) {
        return WebMvcStreamableServerTransportProvider.builder()
                .jsonMapper(new JacksonMcpJsonMapper(jsonMapper))
                .mcpEndpoint(properties.getMcpEndpoint())
                .keepAliveInterval(properties.getKeepAliveInterval())
                .disallowDelete(properties.isDisallowDelete())
                .contextExtractor(onServerRequest(extractor))
                .build();
    }

    @Bean
    @ConditionalOnMissingBean
    @Conditional({McpServerStdioDisabledCondition.class, McpServerStatelessAutoConfiguration.EnabledStatelessServerCondition.class})
    WebMvcStatelessServerTransport webMvcStatelessServerTransport(
            @Qualifier("mcpServerJsonMapper") JsonMapper jsonMapper, McpServerStreamableHttpProperties properties,
            @Qualifier(ToolctxAutoConfiguration.CONTEXT_EXTRACTOR) McpTransportContextExtractor<HttpServletRequest> extractor) {
        return WebMvcStatelessServerTransport.builder()
                .jsonMapper(new JacksonMcpJsonMapper(jsonMapper))
                .messageEndpoint(properties.getMcpEndpoint())
                .contextExtractor(onServerRequest(extractor))
                .build();
    }

    /** Spring AI's SSE transport (its default protocol): refused at startup (see above). */
    @Bean
    @Conditional(McpServerStdioDisabledCondition.class)
    McpServerProperties.ServerProtocol toolctxGuardedProtocol(McpServerProperties server) {
        if (server.getProtocol() == McpServerProperties.ServerProtocol.SSE) {
            throw new ToolctxException("transport_unsupported",
                    "toolctx-spring guards Spring AI's STREAMABLE and STATELESS WebMvc transports; the SSE transport cannot carry "
                            + "the verified context to a tool: set spring.ai.mcp.server.protocol to STREAMABLE or STATELESS");
        }
        return server.getProtocol();
    }
}

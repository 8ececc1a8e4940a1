package dev.toolctx.example.kotlin

import dev.toolctx.Idempotent
import dev.toolctx.ToolctxContextExtractor
import dev.toolctx.ToolctxFilter
import dev.toolctx.Verifier
import dev.toolctx.VerifierOptions
import io.modelcontextprotocol.json.McpJsonDefaults
import io.modelcontextprotocol.server.McpServer
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider
import io.modelcontextprotocol.spec.McpSchema
import jakarta.servlet.DispatcherType
import java.util.EnumSet
import kotlin.system.exitProcess
import org.eclipse.jetty.ee10.servlet.FilterHolder
import org.eclipse.jetty.ee10.servlet.ServletContextHandler
import org.eclipse.jetty.ee10.servlet.ServletHolder
import org.eclipse.jetty.server.HttpConfiguration
import org.eclipse.jetty.server.HttpConnectionFactory
import org.eclipse.jetty.server.Server
import org.eclipse.jetty.server.ServerConnector

/** The command line: `--port N` (0: a free one), `--exit-with-stdin`, `--record FILE`. */
class Options(args: Array<String>) {
    private val a = args.toList()

    private fun value(name: String): String? = a.indexOf(name).takeIf { it >= 0 && it + 1 < a.size }?.let { a[it + 1] }

    val port: Int = (value("--port") ?: System.getenv("PORT")?.takeIf { it.isNotEmpty() } ?: "0").toInt()
    val exitWithStdin: Boolean = "--exit-with-stdin" in a
    val record: String? = value("--record")
}

/** The verifier from the environment; a bad configuration throws the core's error (never the secret). */
fun verifierFromEnvironment(): Verifier {
    val secrets = listOfNotNull(System.getenv("TOOLCTX_SECRET"), System.getenv("TOOLCTX_SECRET_PREVIOUS")?.takeIf { it.isNotEmpty() })
    val options = VerifierOptions.builder()
        .instanceId(System.getenv("TOOLCTX_INSTANCE_ID"))
        .secrets(secrets)
    System.getenv("TOOLCTX_CREDENTIAL")?.takeIf { it.isNotEmpty() }?.let { options.credential("authorization", listOf(it)) }
    return Verifier.create(options)
}

/**
 * Jetty on 127.0.0.1:[port], started: [ToolctxFilter] in front of java-sdk's
 * streamable HTTP transport, whose [ToolctxContextExtractor] hands each tool
 * the filter's verdict.
 */
fun start(port: Int, verifier: Verifier, tools: List<SyncToolSpecification>): Server {
    val transport = HttpServletStreamableServerTransportProvider.builder()
        .jsonMapper(McpJsonDefaults.getMapper())
        .mcpEndpoint("/mcp")
        .contextExtractor(ToolctxContextExtractor())
        .build()
    McpServer.sync(transport)
        .serverInfo("toolctx-kotlin-example", "1.0.0")
        .capabilities(McpSchema.ServerCapabilities.builder().tools(true).build())
        .tools(tools)
        .build()

    val server = Server()
    // Room for a context token of max_token_bytes (8 KiB by default) and the
    // other headers: Jetty's default request head is 8 KiB in all.
    val http = HttpConfiguration().apply { requestHeaderSize = 64 * 1024 }
    server.addConnector(ServerConnector(server, HttpConnectionFactory(http)).apply {
        host = "127.0.0.1"
        this.port = port
    })
    val context = ServletContextHandler().apply { contextPath = "/" }
    // The filter decides before anything reads the body.
    context.addFilter(FilterHolder(ToolctxFilter(verifier)).apply { setAsyncSupported(true) }, "/*", EnumSet.of(DispatcherType.REQUEST))
    context.addServlet(ServletHolder(transport).apply { setAsyncSupported(true) }, "/*")
    server.handler = context
    server.start()
    return server
}

fun main(args: Array<String>) {
    val options = Options(args)
    val record = options.record?.let(::Recorder)
    val tools = Tools(McpJsonDefaults.getMapper(), record, Idempotent.builder().build())
    val server = start(options.port, verifierFromEnvironment(), tools.all())
    println("listening http://127.0.0.1:${(server.connectors[0] as ServerConnector).localPort}/mcp")
    System.out.flush()
    if (options.exitWithStdin) {
        while (System.`in`.read() >= 0) {
            // Until standard input closes.
        }
        server.stop()
        exitProcess(0)
    }
    server.join()
}

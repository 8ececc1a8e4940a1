package dev.toolctx.example.kotlin

import com.fasterxml.jackson.databind.ObjectMapper
import dev.toolctx.Idempotent
import dev.toolctx.Progress
import dev.toolctx.ResultLimits
import dev.toolctx.ToolContext
import io.modelcontextprotocol.json.McpJsonMapper
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification
import io.modelcontextprotocol.server.McpSyncServerExchange
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest
import io.modelcontextprotocol.spec.McpSchema.CallToolResult
import io.modelcontextprotocol.spec.McpSchema.TextContent
import io.modelcontextprotocol.spec.McpSchema.Tool
import java.util.concurrent.atomic.AtomicInteger
import java.util.function.BiFunction
import kotlin.jvm.optionals.getOrNull

/** A java-sdk session server's tool handler. */
typealias Handler = BiFunction<McpSyncServerExchange, CallToolRequest, CallToolResult>

/** The example's tools (the Node example's, examples/node-server/common.mjs), written against the Java artifact. */
class Tools(private val mapper: McpJsonMapper, private val record: Recorder?, private val invoices: Idempotent) {
    private val json = ObjectMapper()
    private val probeRuns = AtomicInteger()

    /**
     * A tool whose every result is checked against the platform's limits
     * (a warning per finding); its run is recorded first unless the handler
     * records it itself (inside the idempotency guard).
     */
    private fun tool(name: String, description: String, schema: String, recordsItself: Boolean = false, handler: Handler) =
        SyncToolSpecification.builder()
            .tool(Tool.builder(name, mapper, schema).description(description).build())
            .callHandler(ResultLimits.wrap { exchange, request ->
                if (!recordsItself) record?.run(name)
                handler.apply(exchange, request)
            })
            .build()

    private fun text(value: String): CallToolResult = CallToolResult.builder().content(listOf(TextContent.builder(value).build())).build()

    /** `structuredContent`, and the same JSON as text for models that read only `content`. */
    private fun structured(value: Map<String, Any?>): CallToolResult =
        CallToolResult.builder()
            .content(listOf(TextContent.builder(json.writeValueAsString(value)).build()))
            .structuredContent(value)
            .build()

    private fun CallToolRequest.argument(name: String): Any? = arguments()?.get(name)

    fun all(): List<SyncToolSpecification> = listOf(
        tool("whoami", "What this server saw: the verified context", """{"type":"object","properties":{}}""") { exchange, _ ->
            val transport = exchange.transportContext()
            val context = ToolContext.find(transport).getOrNull()
            structured(mapOf(
                "verified_here" to (transport.get(ToolContext.JUDGED) != null),
                "context" to context?.let { json.convertValue(it.json(), Map::class.java) },
            ))
        },
        tool("get_order", "Looks up an order; says which task asked for it",
            """{"type":"object","properties":{"orderId":{"type":"string"}},"required":["orderId"]}""") { exchange, request ->
            // Throws (filter_missing) when no filter judged the request: never unverified by accident.
            val context = ToolContext.from(exchange)
            val who = "task ${context.taskId()}" + (context.endUserId().getOrNull()?.let { " for $it" } ?: "")
            text("order ${request.argument("orderId")}: 2 items, shipped ($who)")
        },
        tool("export_report", "Exports a report page by page, reporting progress",
            """{"type":"object","properties":{"pages":{"type":"integer","minimum":1,"maximum":20,"default":3}}}""") { exchange, request ->
            val pages = (request.argument("pages") as? Number)?.toInt() ?: 3
            // At the platform's relay rate; the last report is always sent, the held one on close.
            Progress.of(exchange, request).use { progress ->
                for (page in 1..pages) {
                    Thread.sleep(200)
                    progress.report(page.toDouble(), pages.toDouble(), "page $page of $pages")
                }
            }
            text("exported $pages pages")
        },
        tool("toolctx_probe", "Counts its own runs (toolctx conformance probe)", """{"type":"object","properties":{}}""") { _, _ ->
            structured(mapOf("runs" to probeRuns.incrementAndGet()))
        },
        tool("create_invoice", "Not safe to run twice: a retry gets the first result back",
            """{"type":"object","properties":{"amount":{"type":"integer"}},"required":["amount"]}""",
            recordsItself = true,
            handler = invoices.wrap { exchange, request ->
                record?.run("create_invoice")
                val context = ToolContext.from(exchange)
                structured(mapOf("invoice" to "inv-${context.idempotencyKey()}", "amount" to ((request.argument("amount") as? Number)?.toLong() ?: 0)))
            }),
    )
}

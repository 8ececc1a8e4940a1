package dev.toolctx;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import java.util.Optional;

/**
 * The verified context of one {@code tools/call}, as the core accepted it
 * (CONTRACT §2). {@link #from} finds it where {@link ToolctxFilter} and
 * {@link ToolctxContextExtractor} left it, and throws when it is not
 * there: a tool never runs on a context that was not verified.
 */
public final class ToolContext {
    /** The request attribute {@link ToolctxFilter} sets on an accepted call. */
    public static final String ATTRIBUTE = "dev.toolctx.context";
    /** The request attribute {@link ToolctxFilter} sets on every request it judged. */
    public static final String JUDGED = "dev.toolctx.judged";
    /** The transport context entry holding the request's {@code MCP-Protocol-Version} (for {@link Idempotent}'s replays). */
    public static final String REVISION = "dev.toolctx.revision";

    private final String raw;
    private final ObjectNode json;

    ToolContext(String raw, ObjectNode json) {
        this.raw = raw;
        this.json = json;
    }

    /** The context of the call {@code exchange} serves (a synchronous server). */
    public static ToolContext from(McpSyncServerExchange exchange) {
        return from(exchange.transportContext());
    }

    /** The context of the call {@code exchange} serves (an asynchronous server). */
    public static ToolContext from(McpAsyncServerExchange exchange) {
        return from(exchange.transportContext());
    }

    /** The context in a transport context (a stateless server's handlers get it directly). */
    public static ToolContext from(McpTransportContext transport) {
        return find(transport).orElseThrow(() -> missing(transport != null && transport.get(JUDGED) != null));
    }

    /** The context if this call was accepted; empty for a call the filter passed (no token, not required). */
    public static Optional<ToolContext> find(McpTransportContext transport) {
        if (transport == null) return Optional.empty();
        Object it = transport.get(ATTRIBUTE);
        return it instanceof ToolContext ? Optional.of((ToolContext) it) : Optional.empty();
    }

    /** The context the filter set on {@code request}. */
    public static ToolContext from(jakarta.servlet.ServletRequest request) {
        Object it = request.getAttribute(ATTRIBUTE);
        if (it instanceof ToolContext) return (ToolContext) it;
        throw missing(request.getAttribute(JUDGED) != null);
    }

    private static ToolctxException missing(boolean judged) {
        if (judged) {
            return new ToolctxException("no_context", "this call carries no verified toolctx context (it was passed without a token)");
        }
        return new ToolctxException(
                "filter_missing",
                "no toolctx context: put ToolctxFilter in front of the MCP servlet and ToolctxContextExtractor on its transport");
    }

    private String text(String name) {
        JsonNode v = json.get(name);
        return v == null || v.isNull() ? null : v.asText();
    }

    public String taskId() {
        return text("task_id");
    }

    public String toolCallId() {
        return text("tool_call_id");
    }

    public String workspaceId() {
        return text("workspace_id");
    }

    public String idempotencyKey() {
        return text("idempotency_key");
    }

    public String protocol() {
        return text("protocol");
    }

    public Optional<String> agentId() {
        return Optional.ofNullable(text("agent_id"));
    }

    public Optional<String> endUserId() {
        return Optional.ofNullable(text("end_user_id"));
    }

    public Optional<String> tool() {
        return Optional.ofNullable(text("tool"));
    }

    public Optional<String> jti() {
        return Optional.ofNullable(text("jti"));
    }

    public Optional<JsonNode> metadata() {
        return Optional.ofNullable(json.get("metadata"));
    }

    public long iat() {
        return json.path("iat").asLong();
    }

    public long exp() {
        return json.path("exp").asLong();
    }

    public int secretIndex() {
        return json.path("secret_index").asInt();
    }

    /** The JSON-RPC id of the call, as the core read it. */
    public Optional<JsonNode> requestId() {
        return Optional.ofNullable(json.get("request_id"));
    }

    /** One field by its name in the core's JSON. */
    public Optional<JsonNode> get(String name) {
        return Optional.ofNullable(json.get(name));
    }

    /** The context exactly as the core wrote it (numbers as the token had them). */
    public String rawJson() {
        return raw;
    }

    /** The context as the core's JSON, read by Jackson (a copy). */
    public ObjectNode json() {
        return json.deepCopy();
    }

    @Override
    public String toString() {
        return json.toString();
    }
}

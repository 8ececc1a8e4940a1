package dev.toolctx;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A refusal exactly as the core rendered it: write {@code status},
 * {@code content-type: application/json} and {@code body} as they are.
 *
 * @param status the HTTP status
 * @param code the JSON-RPC error code
 * @param reason the core's reason code ({@code token_expired}, ...)
 * @param message the error message
 * @param id the request's id as the core read it ({@code null} node when none)
 * @param body the JSON-RPC error response to send
 */
public record Refusal(int status, long code, String reason, String message, JsonNode id, String body) {}

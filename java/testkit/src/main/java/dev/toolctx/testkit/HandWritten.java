package dev.toolctx.testkit;

import com.auth0.jwt.JWT;
import com.auth0.jwt.JWTVerifier;
import com.auth0.jwt.algorithms.Algorithm;
import com.auth0.jwt.interfaces.DecodedJWT;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

/**
 * The benchmark's baseline (bench/java.sh, not a product path): what a Java
 * developer would write by hand for the same check: auth0 java-jwt 4.6.2
 * HS256 with issuer, audience and leeway, Jackson for the body, and the
 * `_meta` binding (the agentarea/* keys equal to the token's claims, the
 * tool name to its `tool`). It decides far less than the core (no
 * duplicate-member, depth, type or limit checks): it is only the yardstick.
 */
final class HandWritten {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> BOUND = List.of("task_id", "tool_call_id", "workspace_id", "idempotency_key", "protocol");
    private final JWTVerifier verifier;

    HandWritten(String secret, String instance, long now) {
        this(secret, instance, Clock.fixed(Instant.ofEpochSecond(now), ZoneOffset.UTC));
    }

    HandWritten(String secret, String instance, Clock clock) {
        this.verifier = ((com.auth0.jwt.JWTVerifier.BaseVerification) JWT.require(Algorithm.HMAC256(secret))
                        .withIssuer("agentarea")
                        .withAudience(instance)
                        .acceptLeeway(30))
                .build(clock);
    }

    /** The verified claims, or null when the call is refused. */
    DecodedJWT verify(String token, byte[] body) throws Exception {
        if (token == null) return null;
        DecodedJWT jwt = verifier.verify(token);
        JsonNode msg = JSON.readTree(body);
        if (!"tools/call".equals(msg.path("method").asText())) return null;
        JsonNode params = msg.path("params");
        if (!params.path("name").asText().equals(jwt.getClaim("tool").asString())) return null;
        JsonNode meta = params.path("_meta");
        for (String k : BOUND) {
            if (!meta.path("agentarea/" + k).asText().equals(jwt.getClaim(k).asString())) return null;
        }
        return jwt;
    }
}

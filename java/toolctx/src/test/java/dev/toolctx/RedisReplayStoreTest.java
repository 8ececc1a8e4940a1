package dev.toolctx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lettuce.core.RedisClient;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.spec.McpSchema;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The shared replay guard against Debian's redis-server on 127.0.0.1 (a
 * free port, started and stopped here): two verifiers (two replicas) share
 * the core's claim; Redis paused (SIGSTOP) or killed refuses, never
 * accepts, and an idempotent tool fails without running (never unguarded,
 * never twice). Skipped only when redis-server is missing and
 * TOOLCTX_REQUIRE_REDIS is not set (scripts/test-java sets it).
 */
class RedisReplayStoreTest {
    static Process redis;
    static int port;

    @BeforeAll
    static void start() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try {
            redis = new ProcessBuilder("redis-server", "--port", String.valueOf(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("TOOLCTX_REQUIRE_REDIS") == null, "redis-server is missing");
            throw e;
        }
        for (int i = 0; i < 100; i++) {
            try (Socket ignored = new Socket("127.0.0.1", port)) {
                return;
            } catch (IOException e) {
                Thread.sleep(50);
            }
        }
        throw new IllegalStateException("redis-server did not start");
    }

    @AfterAll
    static void stop() throws Exception {
        if (redis != null) {
            redis.destroyForcibly().waitFor();
        }
    }

    static void signal(String sig) throws Exception {
        new ProcessBuilder("kill", "-" + sig, String.valueOf(redis.pid())).inheritIO().start().waitFor();
    }

    static Verifier replica(StatefulRedisConnection<String, String> c) {
        return Verifier.create(VerifierTest.options().replayStore(RedisReplayStore.create(c)));
    }

    @Test
    void replicasShareTheClaimAndAFaultRefuses() throws Exception {
        RedisClient client = RedisClient.create("redis://127.0.0.1:" + port);
        try (StatefulRedisConnection<String, String> a = client.connect(); StatefulRedisConnection<String, String> b = client.connect()) {
            Verifier one = replica(a);
            Verifier two = replica(b);
            JsonNode c = VerifierTest.VALID.get("cases").get(0);
            // Many threads on two replicas: exactly one acceptance.
            ExecutorService pool = Executors.newFixedThreadPool(8);
            List<Future<Verdict>> all = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                Verifier v = i % 2 == 0 ? one : two;
                all.add(pool.submit(() -> VerifierTest.verify(v, c)));
            }
            int accepted = 0;
            for (Future<Verdict> f : all) {
                Verdict v = f.get();
                if (v.outcome() == Verdict.Outcome.ACCEPT) accepted++;
                else assertEquals("token_replayed", v.refusal().orElseThrow().reason());
            }
            pool.shutdown();
            assertEquals(1, accepted);
            // The key is the core's: the other front ends read the same entry.
            String jti = VerifierTest.verify(Verifier.create(VerifierTest.options()), c).context().orElseThrow().jti().orElseThrow();
            assertTrue(a.sync().exists(Verifier.replayDefaults().get(0) + jti) == 1, "the core's key is in Redis");

            // The idempotency guard on the same Redis: a tool that runs once.
            AtomicInteger runs = new AtomicInteger();
            var tool = Idempotent.builder().store(RedisIdempotencyStore.create(a)).leaseMs(1000).waitMs(200).build().wrapStateless((t, r) -> {
                runs.incrementAndGet();
                return McpSchema.CallToolResult.builder().content(List.of(new McpSchema.TextContent("ran"))).build();
            });
            McpTransportContext ctx = IdempotentTest.verified();

            JsonNode fresh = VerifierTest.VALID.get("cases").get(2);
            signal("STOP");
            try {
                Verdict paused = VerifierTest.verify(one, fresh);
                assertEquals("internal_error", paused.refusal().orElseThrow().reason(), "paused: refused");
                ToolctxException failed = assertThrows(ToolctxException.class, () -> tool.apply(ctx, IdempotentTest.call(7)));
                assertEquals("idempotency_store_failed", failed.code());
                assertEquals(0, runs.get(), "paused: the tool did not run unguarded");
            } finally {
                signal("CONT");
            }
            // The claim sent while Redis was paused lands when it resumes: the
            // key is held (in progress) until its lease ends, and nothing runs.
            McpSchema.CallToolResult held = tool.apply(ctx, IdempotentTest.call(7));
            assertTrue(Boolean.TRUE.equals(held.isError()) && runs.get() == 0, "held by the paused claim: refused, not run");
            Thread.sleep(1200);
            tool.apply(ctx, IdempotentTest.call(7));
            McpSchema.CallToolResult retry = tool.apply(ctx, IdempotentTest.call(7));
            assertEquals(1, runs.get(), "after the lease: run once, the retry replayed");
            assertTrue(retry.meta() != null && !retry.meta().isEmpty(), "replayed");
            redis.destroyForcibly().waitFor();
            Verdict killed = VerifierTest.verify(two, fresh);
            assertEquals("internal_error", killed.refusal().orElseThrow().reason(), "killed: refused");
            assertThrows(ToolctxException.class, () -> tool.apply(ctx, IdempotentTest.call(7)));
            assertEquals(1, runs.get(), "killed: not run again");
        } finally {
            client.shutdown();
        }
    }
}

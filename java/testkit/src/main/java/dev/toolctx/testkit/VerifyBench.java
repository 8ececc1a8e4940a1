package dev.toolctx.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import dev.toolctx.Header;
import dev.toolctx.Verdict;
import dev.toolctx.Verifier;
import dev.toolctx.VerifierOptions;
import dev.toolctx.internal.ConfigureFlags;
import dev.toolctx.internal.CoreInstance;
import dev.toolctx.internal.CoreRuntime;
import dev.toolctx.internal.Fields;
import dev.toolctx.internal.Heads;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The runtime measurement (bench/java.sh, not a test): the verify loop of
 * one accepted call (tests/vectors/valid.json's first case) on the core's
 * runtime in this JVM ({@link Verifier#runtime}: native through FFM on Java
 * 22+, Chicory before or with {@code -Dtoolctx.runtime=chicory}), the raw
 * export and the public {@code Verifier.verify}, then the hand-written
 * check, warmed, median of 3 runs each.
 *
 *   VerifyBench VECTORS.json [ITERATIONS]
 */
public final class VerifyBench {
    public static void main(String[] args) throws Exception {
        JsonNode file = ExactJson.read(Files.readString(Path.of(args[0])));
        int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 50_000;
        JsonNode c = file.get("cases").get(0);
        String config = ExactJson.write(file.get("config"));
        long now = Long.parseLong(ExactJson.num(file.get("now")).text());
        List<Header> headers = new ArrayList<>();
        for (JsonNode h : c.path("request").path("headers")) headers.add(new Header(h.get(0).asText(), h.get(1).asText()));
        byte[] body = c.path("request").path("body").asText().getBytes(StandardCharsets.UTF_8);
        byte[][] verifyFields = Heads.encode("POST", headers, body);
        String runtime = Verifier.runtime();
        CoreInstance w = CoreRuntime.verifier();
        w.call("toolctx_configure", new byte[][] {Fields.utf8(config)}, ConfigureFlags.bit("include_reason") | ConfigureFlags.bit("include_reason_given"), 0);
        byte[] answer = w.call("toolctx_verify", verifyFields, now);
        if (answer.length < 2 || answer[1] != 'a') throw new IllegalStateException("the bench case is not accepted: " + new String(answer, StandardCharsets.UTF_8));
        Verifier verifier = Verifier.create(VerifierOptions.fromCoreConfig(config));
        // Both modules' raw loop, then the public path, then the baseline.
        report(runtime + " raw toolctx_verify", iterations, () -> w.call("toolctx_verify", verifyFields, now));
        long core = report(runtime + " Verifier.verify", iterations, () -> {
            Verdict v = verifier.verify("POST", headers, body, now);
            if (v.outcome() != Verdict.Outcome.ACCEPT) throw new IllegalStateException(v.toString());
        });
        JsonNode cfg = file.get("config");
        HandWritten hand = new HandWritten(cfg.get("secrets").get(0).asText(), cfg.get("instance_id").asText(), now);
        String token = headers.stream().filter(h -> h.name().equalsIgnoreCase("x-agentarea-context")).findFirst().orElseThrow().value();
        long baseline = report("hand-written java-jwt HS256 + Jackson + _meta binding", iterations, () -> {
            try {
                if (hand.verify(token, body) == null) throw new IllegalStateException("the hand-written check refused the case");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        System.out.printf("ratio %s / hand-written: %.2fx%n", runtime, (double) core / baseline);
    }

    static long report(String what, int iterations, Runnable op) {
        for (int i = 0; i < iterations; i++) op.run(); // warm-up
        long[] ns = new long[3];
        for (int r = 0; r < 3; r++) {
            long t = System.nanoTime();
            for (int i = 0; i < iterations; i++) op.run();
            ns[r] = (System.nanoTime() - t) / iterations;
        }
        Arrays.sort(ns);
        System.out.printf("%s: %d ns/call (median of 3 x %d; runs %s)%n", what, ns[1], iterations, Arrays.toString(ns));
        return ns[1];
    }
}

package dev.toolctx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The runtime the core runs on (native through FFM on Java 22+, Chicory
 * before), and a panic in the native core: refused with the core's
 * internal_error, the next request served. The pom runs these tests on
 * Java 25 (expects native) and on Java 17 (expects chicory); there the
 * native library is the test build, which panics on any input holding
 * {@code toolctx-test-panic} (crates/wasm-abi feature test-panic).
 */
class RuntimeTest {
    static final String PANIC = "toolctx-test-panic";

    @Test
    void theCoreRunsOnTheRuntimeThisJvmChooses() {
        String expected = System.getProperty("toolctx.expect.runtime");
        assertNotNull(expected, "the pom says which runtime each test run expects");
        assertEquals(expected, Verifier.runtime());
    }

    /** The valid case's request with one more header, which holds the panic marker. */
    static VerifierTest.Req panicking(JsonNode c) {
        VerifierTest.Req r = VerifierTest.request(c);
        List<Header> headers = new ArrayList<>(r.headers());
        headers.add(new Header("x-test", PANIC));
        return new VerifierTest.Req(r.method(), headers, r.body());
    }

    @Test
    void aPanicInTheNativeCoreIsRefusedAndTheNextRequestServed() {
        assumeTrue(Verifier.runtime().equals("native"), "the native runtime only");
        Verifier v = Verifier.create(VerifierTest.options());
        JsonNode c = VerifierTest.VALID.get("cases").get(0);
        for (int i = 0; i < 3; i++) {
            VerifierTest.Req r = panicking(c);
            Verdict refused = v.verify(r.method(), r.headers(), r.body(), VerifierTest.now());
            assertEquals(Verdict.Outcome.REJECT, refused.outcome());
            assertEquals("internal_error", refused.refusal().orElseThrow().reason());
            assertEquals(500, refused.refusal().orElseThrow().status());
            Verdict next = VerifierTest.verify(v, c);
            assertEquals(Verdict.Outcome.ACCEPT, next.outcome(), "served after the panic");
        }
        Verdict head = v.checkHeaders("POST", List.of(new Header("x-test", PANIC)));
        assertEquals("internal_error", head.refusal().orElseThrow().reason());
        assertEquals(Verdict.Outcome.READ_BODY, v.checkHeaders("POST", List.of()).outcome());
    }

    /** The test build's panic message (crates/wasm-abi native.rs), standing for a request's data. */
    static final String PAYLOAD = "toolctx-panic-payload-5f1c";

    /**
     * The native library's own stderr (a JVM of its own, as this one's is
     * not the test's to read): one fixed line per panic, with where, and
     * never the panic's message.
     */
    @Test
    void aPanicsMessageNeverReachesStderr() throws Exception {
        assumeTrue(Verifier.runtime().equals("native"), "the native runtime only");
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), PanicChild.class.getName())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.PIPE)
                .start();
        String err = new String(child.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child JVM ended");
        assertEquals(0, child.exitValue(), err);
        assertTrue(err.contains("toolctx: internal error (a panic was caught; the request was refused) at "), err);
        assertTrue(err.contains("native.rs:"), err);
        assertFalse(err.contains(PAYLOAD), err);
        assertFalse(err.contains("panicked at"), err);
    }

    /** The child of {@link #aPanicsMessageNeverReachesStderr}: one panic refused, then a request served. */
    static final class PanicChild {
        public static void main(String[] args) {
            Verifier v = Verifier.create(VerifierTest.options());
            JsonNode c = VerifierTest.VALID.get("cases").get(0);
            VerifierTest.Req r = panicking(c);
            String refused = v.verify(r.method(), r.headers(), r.body(), VerifierTest.now()).refusal().orElseThrow().reason();
            Verdict next = VerifierTest.verify(v, c);
            if (!refused.equals("internal_error") || next.outcome() != Verdict.Outcome.ACCEPT) System.exit(3);
        }
    }

    @Test
    void aPanicInTheMemoryGuardsInstanceRefusesFromThenOn() {
        assumeTrue(Verifier.runtime().equals("native"), "the native runtime only");
        // The guard's one instance holds the cache of used ids: gone with
        // the panic, so no call can be judged a first use any more.
        Verifier v = Verifier.create(VerifierTest.options().memoryReplayGuard(0));
        JsonNode cases = VerifierTest.VALID.get("cases");
        assertEquals(Verdict.Outcome.ACCEPT, VerifierTest.verify(v, cases.get(0)).outcome());
        VerifierTest.Req r = panicking(cases.get(1));
        assertEquals("internal_error", v.verify(r.method(), r.headers(), r.body(), VerifierTest.now()).refusal().orElseThrow().reason());
        assertEquals("internal_error", VerifierTest.verify(v, cases.get(2)).refusal().orElseThrow().reason());
    }
}

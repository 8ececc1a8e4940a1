package dev.toolctx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
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

package dev.toolctx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Progress and ResultLimits as a java-sdk tool uses them (the rules themselves: HelperVectorsTest). */
class ProgressAndLimitsTest {
    @Test
    void progressSendsTheFirstHoldsTheNextAndSendsItOnClose() {
        List<McpSchema.ProgressNotification> sent = new ArrayList<>();
        // The longest interval (a minute), which no test outlives: the held
        // report goes out on close, never on a timer.
        try (Progress p = Progress.of("tok-1", sent::add, 60_000)) {
            p.report(1, 10);
            p.report(2, 10.0, "two");
            assertEquals(1, sent.size(), "the second report is held: " + sent);
            assertEquals(1, p.sent());
        }
        assertEquals(2, sent.size(), "the held report is sent on close: " + sent);
        assertEquals("tok-1", sent.get(1).progressToken());
        assertEquals(2.0, sent.get(1).progress());
        assertEquals(10.0, sent.get(1).total());
        assertEquals("two", sent.get(1).message());
    }

    @Test
    void aHeldReportIsSentByTheTimerAtTheIntervalsEnd() throws InterruptedException {
        BlockingQueue<McpSchema.ProgressNotification> sent = new LinkedBlockingQueue<>();
        try (Progress p = Progress.of("tok-2", sent::add, 50)) {
            p.report(1);
            p.report(2);
            assertEquals(1.0, sent.take().progress());
            // The timer's send, while the call still runs (a bound on the wait, not a measured time).
            McpSchema.ProgressNotification held = sent.poll(60, TimeUnit.SECONDS);
            assertEquals(2.0, held == null ? null : held.progress(), "the timer sent the held report");
            assertEquals(2, p.sent());
        }
        assertTrue(sent.isEmpty(), "nothing held, nothing sent on close: " + sent);
    }

    @Test
    void theFinalReportGoesAtOnceAndNothingAfterIt() {
        List<McpSchema.ProgressNotification> sent = new ArrayList<>();
        try (Progress p = Progress.of(7, sent::add, 60_000)) {
            p.report(1, 3);
            p.report(3, 3);
            p.report(4, 3);
        }
        assertEquals(List.of(1.0, 3.0), sent.stream().map(McpSchema.ProgressNotification::progress).toList());
    }

    @Test
    void theIntervalIsReadByTheSettingsTable() {
        // 0 is the default (the platform's 500 ms), not "no limit": the second report is held.
        List<McpSchema.ProgressNotification> sent = new ArrayList<>();
        try (Progress p = Progress.of("tok-0", sent::add, 0)) {
            p.report(1);
            p.report(2);
            assertEquals(1, p.sent());
        }
        for (long ms : new long[] {-1, 60_001}) {
            ToolctxException e = assertThrows(ToolctxException.class, () -> Progress.of("t", n -> {}, ms));
            assertEquals("limit_out_of_range", e.code());
        }
    }

    @Test
    void withoutAProgressTokenNothingIsSent() {
        List<McpSchema.ProgressNotification> sent = new ArrayList<>();
        try (Progress p = Progress.of(null, sent::add)) {
            p.report(1, 2);
            p.report(2, 2);
        }
        assertTrue(sent.isEmpty());
    }

    @Test
    void aFailedSendNeverFailsTheTool() {
        try (Progress p = Progress.of("t", n -> {
            throw new IllegalStateException("stream closed");
        })) {
            p.report(1);
        }
    }

    @Test
    void wrappedHandlersHandEachFindingToTheHook() {
        List<LimitFinding> found = new ArrayList<>();
        var tool = ResultLimits.wrapStateless((McpTransportContext t, CallToolRequest r) -> CallToolResult.builder()
                .content(List.of(new McpSchema.TextContent("x".repeat(ResultLimits.limits().path("textChars").asInt() + 1)))).build(),
                found::add);
        CallToolResult out = tool.apply(McpTransportContext.EMPTY, new CallToolRequest("t", Map.of()));
        assertEquals(1, out.content().size(), "the result is returned unchanged");
        assertEquals(List.of("text_offloaded"), found.stream().map(LimitFinding::code).toList());
        assertTrue(ResultLimits.checkResult("{\"content\":[]}").isEmpty());
        assertEquals("result_shape", assertThrows(ToolctxException.class, () -> ResultLimits.checkResult("[]")).code());
    }
}

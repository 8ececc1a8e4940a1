package dev.toolctx;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Progress for one tool call (CONTRACT §5; npm's {@code progress}, Go's
 * {@code gosdk.NewProgress}): {@code notifications/progress} with the
 * call's {@code progressToken}, at the platform's relay rate. Which report
 * goes out when (sent now, held for the end of the interval, dropped as not
 * increasing or after the final one) is the core's rule; the clock, the
 * timer and the send are here. Close it when the tool returns
 * (try-with-resources): the last held report is sent, then nothing more.
 *
 * <pre>{@code
 * try (Progress progress = Progress.of(exchange, request)) {
 *     for (int page = 1; page <= pages; page++) { export(page); progress.report(page, pages, "page " + page); }
 * }
 * }</pre>
 *
 * A call without a {@code progressToken} (the client asked for none) sends
 * nothing. A failed send (the stream closed) is dropped: progress never
 * fails the tool.
 */
public final class Progress implements AutoCloseable {
    /** One daemon thread for every call's flush timers. */
    private static final ScheduledExecutorService TIMERS = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "toolctx-progress");
        t.setDaemon(true);
        return t;
    });

    private final Object token;
    private final Consumer<McpSchema.ProgressNotification> send;
    private final Coalescer coalescer;
    private ScheduledFuture<?> timer;
    private boolean closed;

    private Progress(Object token, Consumer<McpSchema.ProgressNotification> send, long intervalMs) {
        this.token = token;
        this.send = send;
        this.coalescer = new Coalescer(intervalMs);
    }

    /** The progress of a session server's call, sent on the exchange. */
    public static Progress of(McpSyncServerExchange exchange, CallToolRequest request) {
        return of(request.progressToken(), exchange::progressNotification);
    }

    /**
     * The progress of the call whose {@code progressToken} this is (null:
     * none), sent by {@code send} (any transport), at the platform's rate.
     */
    public static Progress of(Object progressToken, Consumer<McpSchema.ProgressNotification> send) {
        return of(progressToken, send, 0);
    }

    /**
     * As above with your interval in ms, read by the core's settings table
     * ({@code progress_interval_ms}: 0 the platform's; outside 1 to 60,000
     * a {@code ToolctxException}, {@code limit_out_of_range}).
     */
    public static Progress of(Object progressToken, Consumer<McpSchema.ProgressNotification> send, long intervalMs) {
        return new Progress(progressToken, send, intervalMs);
    }

    private static long now() {
        return System.currentTimeMillis();
    }

    /** Reports {@code done} (it must increase), no total. */
    public void report(double done) {
        report(done, null, null);
    }

    /** Reports {@code done} of {@code total}; {@code done >= total} is the final report, sent at once. */
    public void report(double done, double total) {
        report(done, total, null);
    }

    /** Reports {@code done} of {@code total} (null: none) with a message (null: none). */
    public synchronized void report(double done, Double total, String message) {
        if (token == null) return;
        String answer = coalescer.report(now(), done, total == null ? Double.NaN : total, message);
        if (answer.startsWith("a")) arm(Long.parseLong(answer.substring(1)));
        send(answer);
    }

    /** Sends a report held back by the rate limit now (say, before a long step). */
    public synchronized void flush() {
        if (token == null) return;
        send(coalescer.flush(now()));
    }

    /** Notifications sent so far. */
    public long sent() {
        return coalescer.sent();
    }

    /** The call ended: the held report, if any, is sent; nothing after. */
    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        cancel();
        try {
            if (token != null) send(coalescer.flush(now()));
            coalescer.close();
        } finally {
            coalescer.free();
        }
    }

    private void cancel() {
        if (timer != null) timer.cancel(false);
        timer = null;
    }

    /** A timer asks the core at the flush time; too early, it waits again. */
    private void arm(long at) {
        cancel();
        timer = TIMERS.schedule(this::fire, Math.max(0, at - now()), TimeUnit.MILLISECONDS);
    }

    private synchronized void fire() {
        if (closed) return;
        timer = null;
        try {
            String answer = coalescer.tick(now());
            if (answer.startsWith("w")) arm(Long.parseLong(answer.substring(1)));
            else send(answer);
        } catch (ToolctxException e) {
            // The core's instance is gone: nothing more is sent for this call.
        }
    }

    /** {@code s} + the report as JSON: sent with this call's token; anything else sends nothing. */
    private void send(String answer) {
        if (!answer.startsWith("s")) return;
        cancel();
        JsonNode r;
        try {
            r = VerifierOptions.JSON.readTree(answer.substring(1));
        } catch (java.io.IOException e) {
            throw new ToolctxException("internal", "progress: the core's report is not JSON");
        }
        JsonNode total = r.get("total");
        JsonNode message = r.get("message");
        try {
            send.accept(new McpSchema.ProgressNotification(token, r.path("progress").asDouble(),
                    total == null ? null : total.asDouble(), message == null ? null : message.asText(), null));
        } catch (RuntimeException e) {
            // The call ended or its stream closed: progress never fails the tool.
        }
    }
}

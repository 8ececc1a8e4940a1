package dev.toolctx;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.ProtocolKeyword;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Sends a command the core wrote, as its arguments, and hands back the
 * reply as the core reads it: a kind ({@code nil}, {@code status},
 * {@code bulk}, {@code integer}, {@code error}, {@code other}) and its
 * bytes. A reply that does not come within the timeout throws.
 */
final class RedisCommands {
    private final StatefulRedisConnection<?, ?> connection;
    private final long timeoutMs;

    RedisCommands(StatefulRedisConnection<?, ?> connection, long timeoutMs) {
        this.connection = connection;
        this.timeoutMs = timeoutMs;
    }

    record Reply(String kind, byte[] value) {}

    private static final byte[] NONE = new byte[0];

    /** The raw reply kept with its kind. */
    private static final class RawOutput extends CommandOutput<byte[], byte[], Reply> {
        RawOutput() {
            super(ByteArrayCodec.INSTANCE, new Reply("nil", NONE));
        }

        private static byte[] bytes(ByteBuffer b) {
            byte[] out = new byte[b.remaining()];
            b.get(out);
            return out;
        }

        @Override
        public void set(ByteBuffer bytes) {
            output = bytes == null ? new Reply("nil", NONE) : new Reply("bulk", bytes(bytes));
        }

        @Override
        public void setSingle(ByteBuffer bytes) {
            output = bytes == null ? new Reply("nil", NONE) : new Reply("status", bytes(bytes));
        }

        @Override
        public void set(long integer) {
            output = new Reply("integer", Long.toString(integer).getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public void multi(int count) {
            output = new Reply("other", NONE);
        }
    }

    private static final class Keyword implements ProtocolKeyword {
        private final byte[] name;

        Keyword(byte[] name) {
            this.name = name;
        }

        @Override
        public byte[] getBytes() {
            return name;
        }

        @Override
        public String toString() {
            return new String(name, StandardCharsets.UTF_8);
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    Reply send(List<byte[]> args) {
        CommandArgs<byte[], byte[]> rest = new CommandArgs<>(ByteArrayCodec.INSTANCE);
        for (byte[] a : args.subList(1, args.size())) rest.add(a);
        RawOutput output = new RawOutput();
        AsyncCommand<byte[], byte[], Reply> command = new AsyncCommand<>(new Command<>(new Keyword(args.get(0)), output, rest));
        ((StatefulRedisConnection) connection).dispatch(command);
        try {
            return command.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RedisCommandExecutionException) {
                String m = e.getCause().getMessage();
                return new Reply("error", m == null ? NONE : m.getBytes(StandardCharsets.UTF_8));
            }
            throw new IllegalStateException("toolctx: redis: the command failed", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("toolctx: redis: interrupted");
        } catch (java.util.concurrent.TimeoutException e) {
            command.cancel(true);
            throw new IllegalStateException("toolctx: redis: no reply within " + timeoutMs + " ms");
        }
    }
}

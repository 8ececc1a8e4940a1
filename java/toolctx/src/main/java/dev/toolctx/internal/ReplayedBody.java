package dev.toolctx.internal;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;

/** A body already read, as a servlet input stream again (a fresh one per call). */
public final class ReplayedBody extends ServletInputStream {
    private final ByteArrayInputStream in;

    public ReplayedBody(byte[] body) {
        this.in = new ByteArrayInputStream(body);
    }

    @Override
    public int read() {
        return in.read();
    }

    @Override
    public int read(byte[] b, int off, int len) {
        return in.read(b, off, len);
    }

    @Override
    public boolean isFinished() {
        return in.available() == 0;
    }

    @Override
    public boolean isReady() {
        return true;
    }

    /** Everything is there already: the listener hears it at once. */
    @Override
    public void setReadListener(ReadListener listener) {
        try {
            listener.onDataAvailable();
            listener.onAllDataRead();
        } catch (IOException e) {
            listener.onError(e);
        }
    }
}

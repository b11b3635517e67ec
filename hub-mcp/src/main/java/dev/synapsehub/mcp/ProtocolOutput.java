package dev.synapsehub.mcp;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Standard output shared by the SDK transport and the {@link StdioGate}: each writes whole
 * lines, so an error the gate answers never lands inside a message the SDK is writing.
 */
final class ProtocolOutput extends OutputStream {
    private final OutputStream out;
    private final ByteArrayOutputStream partial = new ByteArrayOutputStream();
    private final InFlight inFlight;

    /** @param inFlight told of each response the SDK writes */
    ProtocolOutput(OutputStream out, InFlight inFlight) {
        this.out = out;
        this.inFlight = inFlight;
    }

    /** Writes one complete message line (the newline is added). */
    synchronized void writeLine(String line) throws IOException {
        out.write(line.getBytes(StandardCharsets.UTF_8));
        out.write('\n');
        out.flush();
    }

    @Override
    public synchronized void write(int b) throws IOException {
        partial.write(b);
        if (b == '\n') {
            emit();
        }
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) throws IOException {
        int start = off;
        for (int i = off; i < off + len; i++) {
            if (b[i] == '\n') {
                partial.write(b, start, i + 1 - start);
                emit();
                start = i + 1;
            }
        }
        partial.write(b, start, off + len - start);
    }

    /** A partial line stays buffered until its newline: the SDK writes a message and its newline apart. */
    @Override
    public void flush() {
    }

    @Override
    public synchronized void close() throws IOException {
        if (partial.size() > 0) {
            emit();
        }
        out.close();
    }

    private void emit() throws IOException {
        byte[] line = partial.toByteArray();
        partial.reset();
        out.write(line);
        out.flush();
        try {
            com.fasterxml.jackson.databind.JsonNode m = Frames.MAPPER.readTree(line);
            if (m != null && m.has("id") && (m.has("result") || m.has("error"))) {
                inFlight.answered(m.get("id")); // after the flush: the answer is out before the face may close
            }
        } catch (IOException notJson) {
            // the SDK writes JSON lines only; nothing to account for
        }
    }
}

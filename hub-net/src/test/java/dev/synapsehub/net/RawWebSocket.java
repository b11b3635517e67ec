package dev.synapsehub.net;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A WebSocket client that writes frames byte by byte, for what a well-behaved client never
 * sends: a fragment left open, a close code no peer may use, a reset mid-message.
 */
final class RawWebSocket implements AutoCloseable {
    static final int TEXT = 0x1;
    static final int CLOSE = 0x8;

    /** One frame the hub sent. */
    record Frame(int opcode, byte[] payload) {
        /** The status code of a close frame, -1 without one. */
        int closeCode() {
            return payload.length >= 2 ? ((payload[0] & 0xff) << 8) | (payload[1] & 0xff) : -1;
        }

        String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }
    }

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;

    RawWebSocket(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout((int) TestHub.WAIT.toMillis());
        out = socket.getOutputStream();
        in = new DataInputStream(socket.getInputStream());
        out.write(("GET / HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        String headers = readHeaders(in);
        if (!headers.startsWith("HTTP/1.1 101")) {
            throw new IOException("no upgrade: " + headers);
        }
    }

    private static String readHeaders(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed during the handshake: " + head);
            }
            head.write(b);
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    /** Writes one masked frame. */
    void send(boolean fin, int opcode, byte[] payload) throws IOException {
        ByteArrayOutputStream f = new ByteArrayOutputStream();
        f.write((fin ? 0x80 : 0) | opcode);
        if (payload.length < 126) {
            f.write(0x80 | payload.length);
        } else {
            f.write(0x80 | 126);
            f.write(payload.length >> 8);
            f.write(payload.length & 0xff);
        }
        byte[] mask = {0x11, 0x22, 0x33, 0x44};
        f.write(mask);
        for (int i = 0; i < payload.length; i++) {
            f.write(payload[i] ^ mask[i % 4]);
        }
        out.write(f.toByteArray());
        out.flush();
    }

    void sendText(boolean fin, String text) throws IOException {
        send(fin, TEXT, text.getBytes(StandardCharsets.UTF_8));
    }

    /** A close frame with {@code code} and no reason. */
    void sendClose(int code) throws IOException {
        send(true, CLOSE, ByteBuffer.allocate(2).putShort((short) code).array());
    }

    /** The next frame, or null when the hub closed the connection first. */
    Frame read() throws IOException {
        int b0;
        try {
            b0 = in.read();
        } catch (SocketTimeoutException e) {
            throw new IOException("no frame within " + TestHub.WAIT, e);
        }
        if (b0 < 0) {
            return null;
        }
        int b1 = in.readUnsignedByte();
        long length = b1 & 0x7f;
        if (length == 126) {
            length = in.readUnsignedShort();
        } else if (length == 127) {
            length = in.readLong();
        }
        byte[] payload = new byte[(int) length];
        in.readFully(payload);
        return new Frame(b0 & 0x0f, payload);
    }

    /** The first close frame the hub sends (skipping other frames), or null when it only closed TCP. */
    Frame awaitClose() throws IOException {
        for (int i = 0; i < 10_000; i++) {
            Frame f = read();
            if (f == null || f.opcode() == CLOSE) {
                return f;
            }
        }
        throw new IOException("no close frame");
    }

    /** Ends the connection with a TCP reset instead of a close. */
    void reset() throws IOException {
        socket.setSoLinger(true, 0);
        socket.close();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}

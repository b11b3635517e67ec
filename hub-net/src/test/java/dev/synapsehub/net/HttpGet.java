package dev.synapsehub.net;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** A minimal HTTP/1.1 GET on loopback, read up to its Content-Length. */
final class HttpGet {
    private HttpGet() {
    }

    /** The whole response (status line, headers, body) of {@code GET path}. */
    static String body(int port, String path) throws Exception {
        return raw(port, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    }

    /** The whole response to the raw {@code request} (request line, headers, blank line). */
    static String raw(int port, String request) throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(request.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            byte[] chunk = new byte[8192];
            for (int i = 0; i < 10_000; i++) {
                int n;
                try {
                    n = in.read(chunk);
                } catch (java.net.SocketTimeoutException e) {
                    break;
                }
                if (n < 0) {
                    break;
                }
                buf.write(chunk, 0, n);
                if (complete(buf.toString(StandardCharsets.ISO_8859_1))) {
                    break;
                }
            }
            return buf.toString(StandardCharsets.UTF_8);
        }
    }

    private static boolean complete(String raw) {
        int end = raw.indexOf("\r\n\r\n");
        if (end < 0) {
            return false;
        }
        for (String line : raw.substring(0, end).split("\r\n")) {
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                int length = Integer.parseInt(line.substring("content-length:".length()).trim());
                return raw.length() - end - 4 >= length;
            }
        }
        return false;
    }
}

package dev.synapsehub.net.cockpit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/** The cockpit's static files, packaged in the jar and read once: no build step, no CDN. */
final class CockpitAssets {
    /** One file and its content type. */
    record Asset(byte[] bytes, String type) {
    }

    private static final Map<String, String> FILES = Map.of(
            "/", "index.html",
            "/index.html", "index.html",
            "/app.js", "app.js",
            "/app.css", "app.css",
            "/favicon.svg", "favicon.svg");

    private final Map<String, Asset> loaded;

    CockpitAssets() {
        java.util.HashMap<String, Asset> m = new java.util.HashMap<>();
        FILES.forEach((path, file) -> m.put(path, new Asset(read(file), type(file))));
        loaded = Map.copyOf(m);
    }

    /** The asset at {@code path} below {@code /ui}, or null. */
    Asset find(String path) {
        return loaded.get(path);
    }

    private static byte[] read(String file) {
        try (InputStream in = CockpitAssets.class.getResourceAsStream("assets/" + file)) {
            if (in == null) {
                throw new IllegalStateException("cockpit asset missing from the jar: " + file);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String type(String file) {
        if (file.endsWith(".html")) {
            return "text/html; charset=utf-8";
        } else if (file.endsWith(".js")) {
            return "text/javascript; charset=utf-8";
        } else if (file.endsWith(".css")) {
            return "text/css; charset=utf-8";
        }
        return "image/svg+xml";
    }
}

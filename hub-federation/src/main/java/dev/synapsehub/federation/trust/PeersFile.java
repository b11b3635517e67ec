package dev.synapsehub.federation.trust;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.tls.CertificatePin;
import dev.synapsehub.net.tls.FileStamp;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The peers file ({@code --federation-peers}): the watch, claim and relay routes with their URI,
 * pin and token, in place of {@code --multihub-watch}, {@code --claim-peer}, {@code --relay-peer}
 * and their pin and token flags. An owner-only secret file (it holds tokens) loaded strictly:
 * <pre>{"version": 1,
 *  "watch": [{"peer": "LABEL", "uri": "wss://...", "pin": "sha256:HEX", "token": "..."}],
 *  "claim": [{"hub_id": "HUB", "uri": "wss://...", "pin": "sha256:HEX", "token": "..."}],
 *  "relay": [{"hub_id": "HUB", "uri": "wss://...", "pin": "sha256:HEX", "token": "..."}]}</pre>
 * A daemon thread of its own compares the file's stamp (size, modification time, file key, mode,
 * owner, change time) with the last check about once a second and loads a change again; peer
 * operations (some on event loops, which must never block on a disk) only read what the last
 * check found. While the file does not validate every peer operation is refused; it never falls
 * back to the routes it held before. An edit takes effect from the next check (within about a
 * second), not from the next operation.
 */
public final class PeersFile implements PeerRouteSource, AutoCloseable {
    /** How often the watcher checks the file. */
    public static final long CHECK_MILLIS = 1000;
    /** The flag, used as the prefix of every refusal. */
    public static final String FLAG = "--federation-peers:";
    /** Largest peers file read. */
    public static final long MAX_BYTES = 256 * 1024;
    private static final Set<String> ROOT_FIELDS = Set.of("version", "watch", "claim", "relay");
    private static final Set<String> WATCH_FIELDS = Set.of("peer", "uri", "pin", "token");
    private static final Set<String> OWNER_FIELDS = Set.of("hub_id", "uri", "pin", "token");

    private final Path file;
    private final boolean pinsRequired;
    private final Consumer<String> log;
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong invalidEdits = new AtomicLong();
    private final AtomicLong loadedEdits = new AtomicLong();
    private volatile Checked checked;
    private volatile Consumer<PeerRoutes> onChange = r -> { };
    private java.util.concurrent.ScheduledExecutorService watcher;

    /** What the last check of {@code stamps} found: the routes, or why the file does not validate. */
    private record Checked(List<Object> stamps, PeerRoutes routes, String error) {
    }

    private PeersFile(Path file, boolean pinsRequired, Consumer<String> log) {
        this.file = file;
        this.pinsRequired = pinsRequired;
        this.log = log;
    }

    /**
     * Loads {@code file} now and watches it on a daemon thread (closed by {@link #close()});
     * {@code pinsRequired} when this hub presents a client certificate (every route then needs a
     * pin, as with the flags); {@code log} gets one line per change of outcome.
     *
     * @throws TrustFileException naming the file, the field and the fix when it does not validate now
     */
    public static PeersFile watching(Path file, boolean pinsRequired, Consumer<String> log) throws TrustFileException {
        return watching(file, pinsRequired, log, CHECK_MILLIS);
    }

    /** Like the above, checking every {@code checkMillis} (tests: a long interval checks only on {@link #checkNow()}). */
    static PeersFile watching(Path file, boolean pinsRequired, Consumer<String> log, long checkMillis)
            throws TrustFileException {
        PeersFile p = new PeersFile(file.toAbsolutePath().normalize(), pinsRequired, log);
        List<Object> stamps = p.stamps();
        p.checked = new Checked(stamps, load(p.file, pinsRequired), null);
        p.watcher = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "synapse-federation-peers-watch");
            t.setDaemon(true);
            return t;
        });
        p.watcher.scheduleWithFixedDelay(p::checkQuietly, checkMillis, checkMillis,
                java.util.concurrent.TimeUnit.MILLISECONDS);
        return p;
    }

    /** Stops the watcher thread; {@link #current()} then keeps answering what the last check found. */
    @Override
    public void close() {
        if (watcher != null) {
            watcher.shutdownNow();
        }
    }

    /** True while the watcher thread runs (tests: closed with the hub). */
    public boolean watching() {
        return watcher != null && !watcher.isShutdown();
    }

    /** {@code listener} is told the routes of each change that validates (to close links no route names). */
    public void onChange(Consumer<PeerRoutes> listener) {
        this.onChange = listener;
    }

    /** The file watched. */
    public Path file() {
        return file;
    }

    @Override
    public boolean reloads() {
        return true;
    }

    /** Peer operations refused because the file did not validate. */
    public long refusedOperations() {
        return refused.get();
    }

    /** Changes of the file that did not validate (each logged once). */
    public long invalidEdits() {
        return invalidEdits.get();
    }

    /** Changes of the file that validated and are in force (tests await an edit's check with it). */
    public long loadedEdits() {
        return loadedEdits.get();
    }

    /**
     * The routes the last check found; never touches the disk (it is called on event loops).
     *
     * @throws IOException while the file, as last checked, does not validate
     */
    @Override
    public PeerRoutes current() throws IOException {
        Checked c = checked;
        if (c.error() != null) {
            refused.incrementAndGet();
            throw new IOException("--federation-peers does not validate: " + c.error());
        }
        return c.routes();
    }

    /**
     * Loads the file again if its stamp changed since the last check (the watcher calls this about
     * once a second; tests call it to skip the wait).
     */
    public synchronized void checkNow() {
        List<Object> now = stamps();
        Checked c = checked;
        if (c.stamps().equals(now)) {
            return;
        }
        Checked next;
        try {
            next = new Checked(now, load(file, pinsRequired), null);
            log.accept(c.error() != null
                    ? "--federation-peers " + file + " validates again: peer operations resume with its routes"
                    : "--federation-peers " + file + " changed: peer operations use its routes from now on");
        } catch (TrustFileException e) {
            next = new Checked(now, null, e.getMessage());
            invalidEdits.incrementAndGet();
            log.accept("--federation-peers no longer validates; every peer operation is refused until it "
                    + "does: " + e.getMessage());
        }
        checked = next;
        if (next.routes() != null) {
            loadedEdits.incrementAndGet();
            onChange.accept(next.routes());
        }
    }

    private void checkQuietly() {
        try {
            checkNow();
        } catch (RuntimeException fault) { // a fault must not end the watcher: the next check tries again
            log.accept("--federation-peers check failed (tried again in a second): " + fault);
        }
    }

    /**
     * The routes in {@code file}, checked as at start-up.
     *
     * @throws TrustFileException naming the file, the field and the fix
     */
    public static PeerRoutes load(Path file, boolean pinsRequired) throws TrustFileException {
        Path f = file.toAbsolutePath().normalize();
        ObjectNode root;
        try {
            root = StrictJson.object(SecureFile.read(f, FLAG, MAX_BYTES));
        } catch (StrictJson.RepeatedField e) {
            throw refusal("repeats field '" + e.field + "'", f, "keep one '" + e.field + "'");
        } catch (IOException e) {
            throw refusal("is not a JSON object (" + e.getMessage() + ")", f,
                    "write {\"version\": 1, \"watch\": [...], \"claim\": [...], \"relay\": [...]}");
        }
        Set<String> unknown = StrictJson.unknown(root, ROOT_FIELDS);
        if (!unknown.isEmpty()) {
            throw refusal("has unknown fields: " + String.join(", ", unknown), f,
                    "remove them; the fields are version, watch, claim, relay");
        }
        JsonNode version = root.get("version");
        if (version == null || !(version.isIntegralNumber() && version.longValue() == 1)) {
            throw refusal("field version is " + (version == null ? "missing" : version.toString()), f,
                    "set \"version\": 1");
        }
        Map<String, PeerRoute> watch = routes(root, "watch", "peer", WATCH_FIELDS, f, pinsRequired);
        Map<String, PeerRoute> claim = routes(root, "claim", "hub_id", OWNER_FIELDS, f, pinsRequired);
        Map<String, PeerRoute> relay = routes(root, "relay", "hub_id", OWNER_FIELDS, f, pinsRequired);
        // routes to one URI share one link (F9.4): they must agree on how it is secured and on the token
        Map<String, String> seen = new HashMap<>();
        Map<String, PeerRoute> byUri = new HashMap<>();
        for (Map.Entry<String, Map<String, PeerRoute>> kind : Map.of("watch", watch, "claim", claim, "relay", relay)
                .entrySet()) {
            for (PeerRoute r : kind.getValue().values()) {
                String where = kind.getKey() + " '" + r.name() + "'";
                PeerRoute prior = byUri.putIfAbsent(r.uri().toString(), r);
                if (prior != null && !(Objects.equals(prior.pin(), r.pin()) && Objects.equals(prior.token(), r.token()))) {
                    throw refusal(where + " and " + seen.get(r.uri().toString()) + " both reach " + r.uri()
                            + " with a different pin or token", f,
                            "routes to one peer URI share one link: give them the same pin and token");
                }
                seen.putIfAbsent(r.uri().toString(), where);
            }
        }
        return new PeerRoutes(watch, claim, relay);
    }

    private static Map<String, PeerRoute> routes(ObjectNode root, String kind, String nameField, Set<String> fields,
                                                 Path f, boolean pinsRequired) throws TrustFileException {
        Map<String, PeerRoute> out = new LinkedHashMap<>();
        JsonNode list = root.get(kind);
        if (list == null) {
            return out;
        }
        if (!list.isArray()) {
            throw refusal("field " + kind + " must be a list", f, "write \"" + kind + "\": [{\"" + nameField
                    + "\": ..., \"uri\": ..., \"pin\": ..., \"token\": ...}]");
        }
        int i = 0;
        for (JsonNode item : list) {
            String at = kind + "[" + i++ + "]";
            if (!(item instanceof ObjectNode o)) {
                throw refusal(at + " is not an object", f, "write {\"" + nameField + "\": ..., \"uri\": ...}");
            }
            Set<String> extra = StrictJson.unknown(o, fields);
            if (!extra.isEmpty()) {
                throw refusal(at + " has unknown fields: " + String.join(", ", extra), f,
                        "remove them; the fields are " + String.join(", ", new java.util.TreeSet<>(fields)));
            }
            String name = StrictJson.text(o, nameField);
            if (name == null) {
                throw refusal(at + "." + nameField + " is missing or empty", f, "name the " + (nameField.equals("peer")
                        ? "peer's label" : "owning hub's id"));
            }
            URI uri = uri(o, at, f);
            CertificatePin pin = null;
            if (o.has("pin")) {
                String text = StrictJson.text(o, "pin");
                try {
                    pin = CertificatePin.parse(text == null ? "" : text);
                } catch (IllegalArgumentException e) {
                    throw refusal(at + ".pin is not a certificate pin", f,
                            "write \"sha256:<64 hex digits>\" (openssl x509 -outform der | sha256sum)");
                }
                if (!"wss".equalsIgnoreCase(uri.getScheme())) {
                    throw refusal(at + ".pin requires a wss:// uri, got " + uri, f, "use wss:// or remove the pin");
                }
            } else if (pinsRequired) {
                throw refusal(at + ".pin is missing; the multi-hub client identity is presented only to pinned peers",
                        f, "add the peer's \"pin\": \"sha256:<hex>\"");
            }
            String token = null;
            if (o.has("token")) {
                token = StrictJson.text(o, "token");
                if (token == null) {
                    throw refusal(at + ".token must be a non-empty string", f, "give the token, or remove the field");
                }
            }
            if (out.put(name, new PeerRoute(name, uri, pin, token)) != null) {
                throw refusal(at + " names " + nameField + " '" + name + "' twice in " + kind, f, "keep one route each");
            }
        }
        return out;
    }

    private static URI uri(ObjectNode o, String at, Path f) throws TrustFileException {
        String text = StrictJson.text(o, "uri");
        try {
            URI u = URI.create(text == null ? "" : text);
            if (u.getHost() != null && ("ws".equalsIgnoreCase(u.getScheme()) || "wss".equalsIgnoreCase(u.getScheme()))) {
                return u;
            }
        } catch (IllegalArgumentException e) {
            // refused below
        }
        throw refusal(at + ".uri is " + (text == null ? "missing" : "'" + text + "'"), f,
                "give a ws:// or wss:// URI with a host, e.g. wss://hub-b.example:8876/");
    }

    private static TrustFileException refusal(String what, Path file, String fix) {
        return new TrustFileException(FLAG + " " + file + " " + what + " — " + fix);
    }

    /** Size, modification time, file key, mode, owner and change time: a chmod or chown decides validity too. */
    private List<Object> stamps() {
        return List.of(FileStamp.of(file), attribute("posix:permissions"), attribute("unix:uid"),
                attribute("unix:ctime"));
    }

    private String attribute(String name) {
        try {
            Object v = Files.getAttribute(file, name, LinkOption.NOFOLLOW_LINKS);
            return v instanceof Set<?> perms ? PosixFilePermissions.toString(
                    (Set<java.nio.file.attribute.PosixFilePermission>) perms) : String.valueOf(v);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
            return "";
        }
    }
}

package dev.synapsehub.federation.trust;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.tls.CertificatePin;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * Instead of {@code token} a route may name {@code "token_file": "PATH"} (relative to the peers
 * file's directory): a secret file of its own, under the same rules, holding the token on one
 * line, so the peers file need not hold secrets and a token can be rotated by replacing its file.
 * A daemon thread of its own compares the file's stamp (size, modification time, file key, mode,
 * owner, change time), and those of the token files it names, with the last check about once a
 * second and loads a change of either again; peer
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
    /** Largest token file read. */
    public static final long MAX_TOKEN_BYTES = 16 * 1024;
    private static final Set<String> WATCH_FIELDS = Set.of("peer", "uri", "pin", "token", "token_file");
    private static final Set<String> OWNER_FIELDS = Set.of("hub_id", "uri", "pin", "token", "token_file");

    private final Path file;
    private final boolean pinsRequired;
    private final Consumer<String> log;
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong invalidEdits = new AtomicLong();
    private final AtomicLong loadedEdits = new AtomicLong();
    private volatile Checked checked;
    private volatile Consumer<PeerRoutes> onChange = r -> { };
    private java.util.concurrent.ScheduledExecutorService watcher;

    /**
     * What the last check found: the stamps of the peers file and of each token file it named (in
     * {@code tokenStamps}, taken before each was read), and the routes, or why they do not validate.
     */
    private record Checked(List<Object> stamps, Map<Path, List<Object>> tokenStamps, PeerRoutes routes, String error) {
    }

    /**
     * The token files one load read, each with its stamp taken just before it was read (so an edit
     * racing the read is seen by the next check), and its token; on a refusal, those named up to it.
     */
    private static final class TokenFiles {
        final Map<Path, List<Object>> stamps = new LinkedHashMap<>();
        final Map<Path, String> tokens = new HashMap<>();
        final Map<Path, String> fields = new HashMap<>();
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
        List<Object> stamps = TrustFileStamp.of(p.file);
        TokenFiles tokens = new TokenFiles();
        p.checked = new Checked(stamps, tokens.stamps, load(p.file, pinsRequired, tokens), null);
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

    /** True while the file, as last checked, validates (nothing counted: for /health). */
    public boolean valid() {
        return checked.error() == null;
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
        List<Object> now = TrustFileStamp.of(file);
        Checked c = checked;
        if (c.stamps().equals(now) && unchanged(c.tokenStamps())) {
            return;
        }
        Checked next;
        TokenFiles tokens = new TokenFiles();
        try {
            next = new Checked(now, tokens.stamps, load(file, pinsRequired, tokens), null);
            log.accept(c.error() != null
                    ? "--federation-peers " + file + " validates again: peer operations resume with its routes"
                    : "--federation-peers " + file + " changed: peer operations use its routes from now on");
        } catch (TrustFileException e) {
            next = new Checked(now, tokens.stamps, null, e.getMessage());
            log.accept("--federation-peers no longer validates; every peer operation is refused until it "
                    + "does: " + e.getMessage());
        }
        checked = next;
        // counted only once in force: whoever sees the count (a test, /metrics) finds the refusal applied
        if (next.routes() == null) {
            invalidEdits.incrementAndGet();
        } else {
            loadedEdits.incrementAndGet();
            onChange.accept(next.routes());
        }
    }

    private void checkQuietly() {
        try {
            checkNow();
        } catch (Throwable fault) { // a fault must not end the watcher, nor leave the last routes in force
            failClosed("the check itself failed (tried again in a second): " + fault);
        }
    }

    /**
     * A check that could not finish refuses every peer operation until one does: the last routes
     * (and their tokens) are not used on. No stamps, so the next check reads the files again.
     */
    private synchronized void failClosed(String error) {
        Checked c = checked;
        checked = new Checked(List.of(), Map.of(), null, error);
        if (!error.equals(c.error())) { // counted and logged once per distinct failure, not every second
            invalidEdits.incrementAndGet();
            log.accept("--federation-peers: every peer operation is refused until a check succeeds: " + error);
        }
    }

    /** True when every token file last read still has the stamp it had just before it was read. */
    private static boolean unchanged(Map<Path, List<Object>> tokenStamps) {
        for (Map.Entry<Path, List<Object>> e : tokenStamps.entrySet()) {
            if (!e.getValue().equals(TrustFileStamp.of(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    /**
     * The routes in {@code file}, checked as at start-up, with the tokens of the token files it names.
     *
     * @throws TrustFileException naming the file, the field and the fix
     */
    public static PeerRoutes load(Path file, boolean pinsRequired) throws TrustFileException {
        return load(file, pinsRequired, new TokenFiles());
    }

    /**
     * The token files {@code file} names, each with the route field naming it first, as written
     * (for {@code federation doctor}); the file itself is checked as by {@link #load(Path, boolean)}.
     *
     * @throws TrustFileException when the peers file or one of its token files does not validate
     */
    public static Map<Path, String> tokenFiles(Path file, boolean pinsRequired) throws TrustFileException {
        TokenFiles tokens = new TokenFiles();
        load(file, pinsRequired, tokens);
        Map<Path, String> out = new LinkedHashMap<>();
        tokens.stamps.keySet().forEach(p -> out.put(p, tokens.fields.get(p)));
        return out;
    }

    private static PeerRoutes load(Path file, boolean pinsRequired, TokenFiles tokens) throws TrustFileException {
        Path f = file.toAbsolutePath().normalize();
        ObjectNode root;
        try {
            root = StrictJson.object(SecureFile.read(f, FLAG, MAX_BYTES));
        } catch (StrictJson.RepeatedField e) {
            throw refusal("repeats field '" + e.field + "'", f, "keep one '" + e.field + "'");
        } catch (IOException e) {
            throw refusal(StrictJson.notAnObject(e), f,
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
        Map<String, PeerRoute> watch = routes(root, "watch", "peer", WATCH_FIELDS, f, pinsRequired, tokens);
        Map<String, PeerRoute> claim = routes(root, "claim", "hub_id", OWNER_FIELDS, f, pinsRequired, tokens);
        Map<String, PeerRoute> relay = routes(root, "relay", "hub_id", OWNER_FIELDS, f, pinsRequired, tokens);
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
                                                 Path f, boolean pinsRequired, TokenFiles tokens)
            throws TrustFileException {
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
            if (o.has("token") && o.has("token_file")) {
                throw refusal(at + " gives both token and token_file", f, "keep one of them");
            }
            if (o.has("token")) {
                token = StrictJson.text(o, "token");
                if (token == null) {
                    throw refusal(at + ".token must be a non-empty string", f, "give the token, or remove the field");
                }
            } else if (o.has("token_file")) {
                token = tokenFromFile(o, at, f, tokens);
            }
            if (out.put(name, new PeerRoute(name, uri, pin, token)) != null) {
                throw refusal(at + " names " + nameField + " '" + name + "' twice in " + kind, f, "keep one route each");
            }
        }
        return out;
    }

    /**
     * The token in the file {@code at.token_file} names (relative to the peers file's directory),
     * read with the secret-file rules; one file named by several routes is read once.
     */
    private static String tokenFromFile(ObjectNode o, String at, Path f, TokenFiles tokens) throws TrustFileException {
        String text = StrictJson.text(o, "token_file");
        if (text == null) {
            throw refusal(at + ".token_file must be a non-empty string", f,
                    "name the file holding the token (relative to " + f.getParent() + "), or remove the field");
        }
        Path tokenFile;
        try {
            tokenFile = f.getParent().resolve(text).toAbsolutePath().normalize();
        } catch (java.nio.file.InvalidPathException e) {
            throw refusal(at + ".token_file '" + text + "' is not a path", f, "name the file holding the token");
        }
        String known = tokens.tokens.get(tokenFile);
        if (known != null) {
            return known;
        }
        tokens.stamps.put(tokenFile, TrustFileStamp.of(tokenFile));
        tokens.fields.putIfAbsent(tokenFile, at + ".token_file");
        String role = FLAG + " " + f + " " + at + ".token_file:";
        byte[] bytes;
        try {
            bytes = SecureFile.read(tokenFile, role, MAX_TOKEN_BYTES);
        } catch (TrustFileException e) {
            String m = e.getMessage();
            throw new TrustFileException(m.contains(" — ") ? m : m + " — write the token to that file alone "
                    + "(chmod 600, not a symbolic link), or correct token_file", e);
        }
        String token;
        try {
            token = java.nio.charset.StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                    .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes)).toString().strip();
        } catch (java.nio.charset.CharacterCodingException e) {
            throw refusal(at + ".token_file " + tokenFile + " is not UTF-8 text", f, "write the token as one line of text");
        }
        if (token.isEmpty() || token.chars().anyMatch(Character::isISOControl)) {
            throw refusal(at + ".token_file " + tokenFile + (token.isEmpty() ? " is empty" : " holds a control character or more than one line"),
                    f, "write the token alone on one line");
        }
        tokens.tokens.put(tokenFile, token);
        return token;
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

}

package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.federation.follow.PeerView;
import dev.synapsehub.federation.follow.SqliteMirror;
import dev.synapsehub.federation.serve.ObservedQuery;
import dev.synapsehub.federation.trust.FederationStore;
import dev.synapsehub.federation.trust.PeeringRecord;
import dev.synapsehub.federation.trust.Provenance;
import dev.synapsehub.federation.trust.TrustFileException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.Predicate;

/** {@code synapse-hub federation ...}: the federation store (contract F2.1) and the running federation. */
@Command(name = "federation", mixinStandardHelpOptions = true, description = {
    "Federation between hubs (docs/federation.md): the trust store and the peers a hub follows.",
    "Store commands work on a file (default ~/.synapse/federation.json) and never talk to a hub;",
    "status, observed and recover ask a running hub (observed also reads a stopped hub's --db)."},
        subcommands = {FederationCommands.Offer.class, FederationCommands.Import.class, FederationCommands.ListStore.class,
            FederationCommands.Revoke.class, FederationCommands.Fetch.class, FederationCommands.Doctor.class, FederationCommands.Status.class, FederationCommands.Observed.class,
            FederationCommands.Recover.class, FederationRotate.class})
final class FederationCommands implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return ExitCodes.USAGE;
    }

    static Path defaultStore() {
        return Path.of(System.getProperty("user.home"), ".synapse", "federation.json");
    }

    static String expiry(Double expiresAt) {
        return expiresAt == null ? "never" : Instant.ofEpochMilli((long) (expiresAt * 1000)).toString();
    }

    /** The fingerprint block of {@code offer} and {@code fetch}. */
    static void printBundle(PrintWriter out, PeeringRecord r) {
        out.println("domain: " + r.domainId());
        out.println("signing key ids: " + String.join(", ", sorted(r.signingKeyIds())));
        out.println("certificate pins: " + String.join(", ", sorted(r.certificatePins())));
        out.println("namespaces: " + String.join(", ", sorted(r.namespaces())));
        out.println("scope grants: " + r.scopeGrants().size());
        out.println("expires: " + expiry(r.expiresAt()));
        out.println("bundle fingerprint: " + FederationStore.fingerprint(r));
    }

    private static List<String> sorted(List<String> values) {
        return values.stream().sorted().toList();
    }

    static PeeringRecord readBundle(Path file) throws TrustFileException {
        try {
            return FederationStore.parseBundle(Files.readAllBytes(file), file);
        } catch (java.nio.file.NoSuchFileException e) { // the JDK's message is the file name alone
            throw new TrustFileException("cannot read bundle " + file + ": the file does not exist", e);
        } catch (IOException e) {
            throw new TrustFileException("cannot read bundle " + file + ": " + e.getMessage(), e);
        }
    }

    /** Runs a store command, turning a trust-file refusal into exit 2. */
    abstract static class StoreCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--store", paramLabel = "FILE", description = "The federation store (default: ~/.synapse/federation.json).")
        Path store;

        Path store() {
            return store == null ? defaultStore() : store;
        }

        abstract int run(PrintWriter out) throws TrustFileException, IOException;

        @Override
        public Integer call() {
            try {
                return run(spec.commandLine().getOut());
            } catch (TrustFileException | IOException e) {
                spec.commandLine().getErr().println("synapse-hub: " + e.getMessage());
                return ExitCodes.USAGE;
            }
        }
    }

    @Command(name = "offer", mixinStandardHelpOptions = true,
            description = "Validate your own bundle (a peering record without provenance) and print its fingerprint "
                    + "for the peer's operator to compare before they import it.")
    static final class Offer extends StoreCommand {
        @Parameters(paramLabel = "BUNDLE")
        Path bundle;

        @Override
        int run(PrintWriter out) throws TrustFileException {
            printBundle(out, readBundle(bundle));
            return ExitCodes.OK;
        }
    }

    @Command(name = "import", mixinStandardHelpOptions = true,
            description = "Add (or replace, by domain) a peer's bundle in the store, with who confirmed it. Trust "
                    + "enters only this way. A running hub re-reads its serving policy's store on the next peer request.")
    static final class Import extends StoreCommand {
        @Parameters(paramLabel = "BUNDLE")
        Path bundle;

        @Option(names = "--confirmed-by", required = true, paramLabel = "OPERATOR",
                description = "Who compared the bundle fingerprint with the peer's operator.")
        String confirmedBy;

        @Option(names = "--source", paramLabel = "TEXT", description = "Where the bundle came from (default: its file name).")
        String source;

        @Override
        int run(PrintWriter out) throws TrustFileException, IOException {
            PeeringRecord bundleRecord = readBundle(bundle);
            FederationStore current = FederationStore.readOrEmpty(store());
            boolean existed = current.record(bundleRecord.domainId()).isPresent();
            PeeringRecord record = bundleRecord.withProvenance(new Provenance(
                    source == null ? bundle.getFileName().toString() : source,
                    System.currentTimeMillis() / 1000.0, confirmedBy));
            current.with(record).write(store());
            out.printf(Locale.ROOT, "%s peering with domain '%s' (%d namespaces, %d keys, %d pins), confirmed by %s%n",
                    existed ? "updated" : "imported", record.domainId(), record.namespaces().size(),
                    record.signingKeyIds().size(), record.certificatePins().size(), confirmedBy);
            return ExitCodes.OK;
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "One line per peer domain: [active]/[expired]/[revoked], counts, expiry, provenance and age. "
                    + "Exit 1 when an active record is older than --max-age.")
    static final class ListStore extends StoreCommand {
        @Option(names = "--max-age", paramLabel = "DAYS", description = "Flag active peerings imported longer ago than this.")
        Double maxAgeDays;

        @Override
        int run(PrintWriter out) throws TrustFileException {
            if (store != null && !Files.exists(store)) { // a mistyped --store would list nothing and pass --max-age
                throw new TrustFileException("--store " + store + ": the file does not exist; name an existing "
                        + "federation store (omit --store for " + defaultStore() + ")");
            }
            double now = System.currentTimeMillis() / 1000.0;
            boolean stale = false;
            for (PeeringRecord r : FederationStore.readOrEmpty(store()).records()) {
                double ageDays = r.provenance() == null ? 0 : (now - r.provenance().importedAt()) / 86400.0;
                String state = r.state(now);
                boolean old = maxAgeDays != null && "active".equals(state) && ageDays > maxAgeDays;
                stale |= old;
                out.printf(Locale.ROOT, "[%s] %s: %d namespaces, %d keys, %d pins; expires %s; from %s, confirmed by %s, "
                        + "%.1f days ago%s%n", state, r.domainId(), r.namespaces().size(), r.signingKeyIds().size(),
                        r.certificatePins().size(), expiry(r.expiresAt()),
                        r.provenance() == null ? "?" : r.provenance().source(),
                        r.provenance() == null ? "?" : r.provenance().confirmedBy(), ageDays, old ? " (older than --max-age)" : "");
            }
            return stale ? ExitCodes.REFUSED : ExitCodes.OK;
        }
    }

    @Command(name = "revoke", mixinStandardHelpOptions = true,
            description = "Mark a peer domain revoked; the record stays and authorises nothing.")
    static final class Revoke extends StoreCommand {
        @Parameters(paramLabel = "DOMAIN")
        String domain;

        @Override
        int run(PrintWriter out) throws TrustFileException, IOException {
            FederationStore current = FederationStore.readOrEmpty(store());
            PeeringRecord r = current.record(domain).orElse(null);
            if (r == null) {
                spec.commandLine().getErr().println("synapse-hub: no peering with domain '" + domain + "' in " + store());
                return ExitCodes.REFUSED;
            }
            current.with(r.revokedCopy()).write(store());
            out.println("revoked peering with domain '" + domain + "'");
            return ExitCodes.OK;
        }
    }

    @Command(name = "fetch", mixinStandardHelpOptions = true,
            description = "Pull a peer hub's own bundle (served with --federation-offer) over the wire, write it to "
                    + "--out and print its fingerprint for comparison. It never imports.")
    static final class Fetch implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "URI", description = "The peer hub, e.g. wss://hub-b.example:8876.")
        java.net.URI uri;

        @Option(names = "--out", required = true, paramLabel = "FILE",
                description = "Where to write the bundle (a new file, unless --replace-existing).")
        Path out;

        @Option(names = "--replace-existing",
                description = "If --out already exists, replace it (atomically) with the fetched bundle; without this"
                        + " flag an existing file is refused (exit 2) and left as it was.")
        boolean replaceExisting;

        @Option(names = "--pin", paramLabel = "sha256:HEX", description = "The peer's server certificate pin (wss:// only).")
        String pin;

        @Option(names = "--token", description = "The peer's connect token, if it has one.")
        String token;

        @Option(names = "--local-id", paramLabel = "NAME", defaultValue = "operator/federation-fetch",
                description = "Name to register as on the peer (default: ${DEFAULT-VALUE}).")
        String localId;

        @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "5", description = "Wait at most this long.")
        double timeout;

        @Override
        public Integer call() {
            PrintWriter err = spec.commandLine().getErr();
            java.time.Duration wait = java.time.Duration.ofMillis((long) (Math.max(0.1, timeout) * 1000));
            if (!replaceExisting && Files.exists(out)) { // before any connection: nothing to fetch for
                err.println("synapse-hub: " + out + " exists; pass --replace-existing to replace it, or name a new"
                        + " file. Nothing was written.");
                return ExitCodes.USAGE;
            }
            try {
                dev.synapsehub.client.tls.ClientTls tls = pin == null ? dev.synapsehub.client.tls.ClientTls.NONE
                        : dev.synapsehub.client.tls.ClientTls.pinned(dev.synapsehub.client.tls.CertificatePin.parse(pin));
                try (HubClient hub = HubClient.connect(uri, wait, tls)) {
                    try {
                        hub.registerBound(localId, token, null, wait); // an open hub's welcome precedes a refusal
                    } catch (java.util.concurrent.TimeoutException e) { // refused as it registered: say why, as operator commands do
                        HubClient.CloseStatus closed = hub.closeFuture().getNow(null);
                        if (closed == null) {
                            throw e;
                        }
                        CloseReasons why = CloseReasons.of(closed, localId);
                        err.println("synapse-hub: " + why.line(uri.toString(), closed));
                        return why.exitCode();
                    }
                    hub.send(hub.frame(localId, "federation_offer_request"));
                    ObjectNode reply = hub.await(f -> "federation_offer".equals(f.path("type").asText())
                            || "error".equals(f.path("type").asText()), wait);
                    if (!"federation_offer".equals(reply.path("type").asText())) {
                        err.println("synapse-hub: " + uri + " offers no bundle: " + reply.path("payload").asText());
                        return ExitCodes.REFUSED;
                    }
                    ObjectNode bundle = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
                    for (String field : List.of("domain_id", "namespaces", "certificate_pins", "signing_key_ids",
                            "scope_grants", "expires_at", "revoked")) {
                        bundle.set(field, reply.get(field));
                    }
                    byte[] bytes = new com.fasterxml.jackson.databind.ObjectMapper()
                            .writerWithDefaultPrettyPrinter().writeValueAsBytes(bundle);
                    PeeringRecord r = FederationStore.parseBundle(bytes, out);
                    try {
                        writeNew(out, bytes, replaceExisting);
                    } catch (java.nio.file.FileAlreadyExistsException e) {
                        err.println("synapse-hub: " + out + " appeared while fetching; pass --replace-existing to"
                                + " replace it. Nothing was written.");
                        return ExitCodes.USAGE;
                    }
                    printBundle(spec.commandLine().getOut(), r);
                    return ExitCodes.OK;
                }
            } catch (IllegalArgumentException | TrustFileException e) {
                err.println("synapse-hub: " + e.getMessage());
                return ExitCodes.USAGE;
            } catch (IOException | java.util.concurrent.TimeoutException e) {
                // without --pin the peer's self-signed certificate fails CA verification: say what to pass
                String hint = pin == null && "wss".equalsIgnoreCase(uri.getScheme()) && handshake(e)
                        ? " (pass --pin sha256:<hex>, the pin of the peer's server certificate, which its operator "
                                + "gives you)" : "";
                err.println("synapse-hub: cannot fetch the offer of " + uri + ": " + e.getMessage() + hint);
                return ExitCodes.UNAVAILABLE;
            }
        }
    }

    /**
     * Writes {@code bytes} to {@code file} all at once, never a partial file: a temporary file
     * beside it, synced, then renamed over it ({@code replace}) or linked in place only if no file
     * is there (else {@link java.nio.file.FileAlreadyExistsException}), and the directory synced.
     */
    static void writeNew(Path file, byte[] bytes, boolean replace) throws IOException {
        Path target = file.toAbsolutePath();
        Path temp = Files.createTempFile(target.getParent(), "." + target.getFileName() + ".", ".tmp");
        try {
            try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(temp,
                    java.nio.file.StandardOpenOption.WRITE)) {
                java.nio.ByteBuffer buf = java.nio.ByteBuffer.wrap(bytes);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            if (replace) {
                Files.move(temp, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            } else {
                try {
                    Files.createLink(target, temp); // fails if a file is there: never clobbers one
                } catch (UnsupportedOperationException noLinks) {
                    Files.move(temp, target); // refuses an existing target
                }
            }
        } finally {
            Files.deleteIfExists(temp);
        }
        try (java.nio.channels.FileChannel dir = java.nio.channels.FileChannel.open(target.getParent(),
                java.nio.file.StandardOpenOption.READ)) {
            dir.force(true); // the rename survives a power loss
        } catch (IOException ignored) {
            // not every file system syncs a directory; the file itself is synced
        }
    }

    /** True when {@code e} (or a cause) is a failed TLS handshake. */
    static boolean handshake(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof javax.net.ssl.SSLException) {
                return true;
            }
        }
        return false;
    }

    @Command(name = "doctor", mixinStandardHelpOptions = true,
            description = {"Read-only checks of a hub's federation setup, given the hub's own flags: the configuration "
                    + "validates as at start-up, certificates are valid (and for how long), the serving policy's "
                    + "peerings are active, and every watch and claim route is reachable with its pin and client "
                    + "certificate and serves a log pull to this hub (registered as this hub's id for that one pull, "
                    + "as its follower does; with the hub running the name is taken and the pull is not checked). "
                    + "Run it with the hub stopped, or expect a WARN or one failed poll: the probe holds the hub's id on "
                    + "each peer for up to ~15 s, and a link of the running hub reconnecting meanwhile is refused "
                    + "name_conflict. Exit 0 when nothing failed, 1 otherwise."})
    static final class Doctor implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @picocli.CommandLine.Mixin
        ServeOptions serve;

        @picocli.CommandLine.Mixin
        FederationOptions federation;

        private int failures;
        private int warnings;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            dev.synapsehub.net.HubConfig config;
            dev.synapsehub.federation.FederationSettings settings;
            try {
                config = serve.hubConfig();
                dev.synapsehub.federation.trust.ServingTrust trust = federation.servingTrust(config.tls() != null, m -> { });
                settings = federation.settings(trust, serve.hubId, config.hubId());
                line(out, "ok", "configuration", "validates (hub id " + config.hubId() + ", "
                        + settings.owners().owners().size() + " namespace owner(s), " + settings.watch().peers().size()
                        + " watched peer(s), " + settings.forward().routes().size() + " claim route(s))");
            } catch (IllegalArgumentException e) {
                line(out, "FAIL", "configuration", e.getMessage());
                return ExitCodes.REFUSED;
            }
            if (federation.peersFile != null) {
                tokenFiles(out, federation.peersFile, settings.watch().clientCertFile() != null);
            }
            if (config.tls() != null) {
                certificate(out, "server certificate", config.tls().certFile());
            }
            if (settings.watch().clientCertFile() != null) {
                certificate(out, "client certificate", settings.watch().clientCertFile());
            } else if (settings.forward().clientCertFile() != null) {
                certificate(out, "client certificate", settings.forward().clientCertFile());
            }
            var policy = settings.trust().startupPolicy();
            if (policy != null) {
                double now = System.currentTimeMillis() / 1000.0;
                for (var grant : policy.grantList()) {
                    PeeringRecord r = policy.store().record(grant.domainId()).orElseThrow();
                    String state = r.state(now);
                    line(out, "active".equals(state) ? "ok" : "FAIL", "grant " + grant.sender(), "domain "
                            + grant.domainId() + " is " + state + ", namespace " + grant.namespace() + ", expires "
                            + expiry(r.expiresAt()));
                }
            }
            routes(out, settings, config.hubId());
            out.println(failures > 0 ? failures + " problem(s) found"
                    : warnings > 0 ? "no problems found; " + warnings + " warning(s) above" : "no problems found");
            return failures == 0 ? ExitCodes.OK : ExitCodes.REFUSED;
        }

        /**
         * Each token file the peers file names, read as the hub reads it (owner-only, one link, no
         * symbolic link, one line); a refusal names the peers file, the route's field and the fix.
         */
        private void tokenFiles(PrintWriter out, Path peersFile, boolean pinsRequired) {
            try {
                java.util.Map<Path, String> files = dev.synapsehub.federation.trust.PeersFile.tokenFiles(peersFile,
                        pinsRequired);
                if (files.isEmpty()) {
                    line(out, "ok", "token files", "none named in " + peersFile.toAbsolutePath().normalize()
                            + " (routes give their token inline, or none)");
                }
                for (java.util.Map.Entry<Path, String> f : files.entrySet()) {
                    line(out, "ok", "token file " + f.getValue(), f.getKey() + ": owner-only, one line, modified "
                            + java.nio.file.Files.getLastModifiedTime(f.getKey(), java.nio.file.LinkOption.NOFOLLOW_LINKS)
                                    .toInstant());
                }
            } catch (dev.synapsehub.federation.trust.TrustFileException | IOException e) {
                line(out, "FAIL", "token files", e.getMessage());
            }
        }

        private void certificate(PrintWriter out, String what, Path file) {
            try {
                java.security.cert.X509Certificate c = dev.synapsehub.client.tls.PemFiles.certificates(file).get(0);
                long daysLeft = java.time.Duration.between(Instant.now(), c.getNotAfter().toInstant()).toDays();
                boolean valid = c.getNotBefore().toInstant().isBefore(Instant.now()) && daysLeft >= 0;
                line(out, !valid ? "FAIL" : daysLeft < 14 ? "WARN" : "ok", what, file + ": "
                        + c.getSubjectX500Principal().getName() + ", valid until " + c.getNotAfter().toInstant()
                        + " (" + daysLeft + " days), pin " + dev.synapsehub.client.tls.CertificatePin.of(c));
            } catch (IOException e) {
                line(out, "FAIL", what, e.getMessage());
            }
        }

        /**
         * Each watch and claim route, probed with one log pull as this hub's follower sends it. The owner
         * decides a forwarded claim with the same check as a log pull (ServingTrust.decide: its policy's
         * grant for this hub and the client certificate), so a claim route is probed the same way; the
         * namespace each claim names is checked only when one is forwarded. A route to a URI already
         * probed is not probed again (the hub shares one link per URI): it gets a line of its own, that
         * probe judged by its own kind's rules.
         */
        private void routes(PrintWriter out, dev.synapsehub.federation.FederationSettings settings, String hubId) {
            dev.synapsehub.federation.trust.PeerRoutes fileRoutes = dev.synapsehub.federation.trust.PeerRoutes.NONE;
            if (federation.peersFile != null) {
                try {
                    fileRoutes = dev.synapsehub.federation.trust.PeersFile.load(federation.peersFile,
                            settings.watch().clientCertFile() != null);
                } catch (TrustFileException e) {
                    line(out, "FAIL", "routes", e.getMessage());
                    return;
                }
            }
            java.util.Map<String, Probed> probed = new java.util.HashMap<>();
            for (var peer : settings.watch().peers()) {
                var route = fileRoutes.watch().get(peer.label());
                String token = route != null ? route.token() : settings.watch().token();
                probe(out, probed, "watch " + peer.label(), peer.uri(), settings.watch().tlsFor(peer), hubId, token,
                        false);
            }
            for (var route : settings.forward().routes().values()) {
                var fileRoute = fileRoutes.claim().get(route.hubId());
                String token = fileRoute != null ? fileRoute.token() : settings.forward().token();
                probe(out, probed, "claim route " + route.hubId(), route.uri(), settings.forward().tlsFor(route), hubId,
                        token, true);
            }
            if (!settings.forward().routes().isEmpty()) {
                line(out, "note", "claim routes", "probed with a log pull: the owner authorises forwarded claims by the "
                        + "same grant and client certificate; the namespace a claim names is checked only when it is "
                        + "forwarded");
            }
        }

        /** A URI already probed: by which route's line, with what result. */
        private record Probed(String what, boolean claimRoute, LogPullProbe.Result result) {
        }

        private void probe(PrintWriter out, java.util.Map<String, Probed> probed, String what, java.net.URI uri,
                dev.synapsehub.client.tls.ClientTls tls, String hubId, String token, boolean claimRoute) {
            Probed earlier = probed.get(uri.toString());
            if (earlier != null) {
                LogPullProbe.Finding own = earlier.result().forRoute(claimRoute);
                // the same finding as the line above is referred to; one the rules of this kind of route
                // judge otherwise (a null log end: WARN for a claim route, FAIL for a watch) is told in full
                String detail = !own.equals(earlier.result().forRoute(earlier.claimRoute())) ? own.detail()
                        : switch (own.verdict()) {
                            case "ok" -> "ok";
                            case "WARN" -> "not checked, see above";
                            default -> "failed, see above";
                        };
                line(out, own.verdict(), what, "same endpoint as " + earlier.what() + ": " + detail);
                return;
            }
            LogPullProbe.Result result = LogPullProbe.probe(uri, tls, hubId, token);
            probed.put(uri.toString(), new Probed(what, claimRoute, result));
            LogPullProbe.Finding f = result.forRoute(claimRoute);
            line(out, f.verdict(), what, f.detail());
        }

        private void line(PrintWriter out, String verdict, String what, String detail) {
            if ("FAIL".equals(verdict)) {
                failures++;
            } else if ("WARN".equals(verdict)) {
                warnings++;
            }
            out.printf(Locale.ROOT, "%-4s %s: %s%n", verdict, what, detail);
        }
    }

    /** Asks a running hub for its advisory view. */
    abstract static class ObservedQueryCommand extends OperatorCommands.Base {
        abstract boolean withClaims();

        @Override
        ObjectNode request(HubClient hub) {
            ObjectNode f = hub.frame("multihub_observed_request");
            f.put("claims", withClaims());
            return f;
        }

        @Override
        Predicate<ObjectNode> isReply() {
            return f -> "multihub_observed".equals(type(f));
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = "Per watched peer of a running hub: cursor, lag, last success, round trip, clock skew, server "
                    + "certificate expiry, last error, quarantine.")
    static final class Status extends ObservedQueryCommand {
        @Override
        boolean withClaims() {
            return false;
        }

        @Override
        void report(ObjectNode reply, PrintWriter out) {
            if (reply.path("peers").isEmpty()) {
                out.println("no watched peers");
            }
            for (JsonNode p : reply.path("peers")) {
                out.println(statusLine(p));
            }
        }
    }

    static String statusLine(JsonNode p) {
        return statusLine(p, false);
    }

    /**
     * One peer's line. {@code offline}: read from a stopped hub's mirror, which keeps the last success
     * and last error but not what only the live link measures (round trip, clock skew, certificate
     * expiry): those say "unknown offline", and the state is the last poll's, not "reachable".
     */
    static String statusLine(JsonNode p, boolean offline) {
        double last = p.path("last_success").asDouble();
        JsonNode rtt = p.path("round_trip_seconds");
        JsonNode notAfter = p.path("certificate_not_after");
        JsonNode skew = p.path("clock_skew_seconds");
        boolean failing = !p.path("last_error").isNull() && !p.path("last_error").isMissingNode();
        String unknown = offline ? "unknown offline" : "unknown";
        String state = failing ? (offline ? "last poll FAILED," : "FAILING,")
                : last > 0 ? (offline ? "last poll ok," : "reachable,") : "not polled yet,";
        return String.format(Locale.ROOT, "%s: %s cursor %d, lag %d, last success %s, round trip %s, clock skew %s, "
                        + "certificate expires %s, last error %s%s",
                p.path("peer").asText(), state, p.path("cursor").asLong(), p.path("lag").asLong(),
                last > 0 ? Instant.ofEpochMilli((long) (last * 1000)).toString() : "never",
                rtt.isNumber() ? String.format(Locale.ROOT, "%.1f ms", rtt.asDouble() * 1000) : unknown,
                skew.isNumber() ? skew.asText() + " s" : unknown,
                notAfter.isNumber() ? Instant.ofEpochMilli((long) (notAfter.asDouble() * 1000)).toString() : unknown,
                failing ? p.path("last_error").asText() : "none",
                p.path("quarantined").asBoolean() ? "; QUARANTINED: " + p.path("quarantine").asText() : "");
    }

    @Command(name = "observed", mixinStandardHelpOptions = true,
            description = "The advisory view (what each watched peer's log asserts; it grants nothing), from a running "
                    + "hub, or offline from a stopped hub's journal with --db.")
    static final class Observed extends ObservedQueryCommand {
        @Option(names = "--db", paramLabel = "FILE", description = "Read the view a hub keeps beside this journal instead.")
        Path db;

        /** True while reporting a stopped hub's mirror (--db). */
        private boolean offline;

        @Override
        boolean withClaims() {
            return true;
        }

        @Override
        public Integer call() {
            if (db == null) {
                return super.call();
            }
            Path mirrorFile = SqliteMirror.fileFor(db);
            if (!Files.isRegularFile(mirrorFile)) {
                spec.commandLine().getErr().println("synapse-hub: no federation mirror beside " + db + " (" + mirrorFile
                        + "); the hub has followed no peer");
                return ExitCodes.DATA_ERROR;
            }
            try {
                // read-only: the file may be a running hub's (or a read-only copy); an offline view never
                // creates, migrates or locks it for writing
                double now = System.currentTimeMillis() / 1000.0;
                List<PeerView> views = SqliteMirror.readOnly(db);
                ObjectNode reply = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
                var peers = reply.putArray("peers");
                views.forEach(v -> peers.add(ObservedQuery.render(v, now, true)));
                // render() writes numbers as raw text for the wire; read back, they are numbers again as a live
                // reply's are (a raw node reads as 0: every last success showed "never")
                ObjectNode parsed = (ObjectNode) new com.fasterxml.jackson.databind.ObjectMapper().readTree(reply.toString());
                if (client.json) {
                    spec.commandLine().getOut().println(FrameText.of(parsed));
                } else {
                    offline = true;
                    report(parsed, spec.commandLine().getOut());
                }
                return exitCode(parsed);
            } catch (Exception e) {
                spec.commandLine().getErr().println("synapse-hub: " + e.getMessage());
                return ExitCodes.DATA_ERROR;
            }
        }

        @Override
        void report(ObjectNode reply, PrintWriter out) {
            if (reply.path("peers").isEmpty()) {
                out.println("no watched peers");
            }
            for (JsonNode p : reply.path("peers")) {
                out.println(statusLine(p, offline));
                for (JsonNode c : p.path("claims")) {
                    out.printf(Locale.ROOT, "  %s %s held by %s (namespace '%s', epoch %d, seq %d, observed on %s)%n",
                            c.path("live").asBoolean() ? "live   " : "expired", c.path("task_id").asText(),
                            c.path("owner").asText(), c.path("namespace").asText(), c.path("epoch").asLong(),
                            c.path("seq").asLong(), c.path("observed_on").asText());
                }
            }
        }
    }

    @Command(name = "recover", mixinStandardHelpOptions = true,
            description = "Lift a watched peer's equivocation quarantine (or restart following a peer whose log went "
                    + "backwards): journals multihub_equivocation_recovery and re-reads the peer from seq 0. Only "
                    + "accepted from the hub's own machine.")
    static final class Recover extends OperatorCommands.Base {
        @Parameters(paramLabel = "PEER")
        String peer;

        @Option(names = "--reason", paramLabel = "TEXT", required = true, description = "Why (its hash is journaled).")
        String reason;

        @Override
        ObjectNode request(HubClient hub) {
            ObjectNode f = hub.frame("multihub_recover_request");
            f.put("peer", peer);
            f.put("reason", reason);
            return f;
        }

        @Override
        Predicate<ObjectNode> isReply() {
            return f -> "multihub_recover_result".equals(type(f));
        }

        @Override
        int exitCode(ObjectNode reply) {
            return "multihub_recover_result".equals(type(reply)) && !reply.path("recovered").asBoolean()
                    ? ExitCodes.REFUSED : super.exitCode(reply);
        }

        @Override
        void report(ObjectNode reply, PrintWriter out) {
            out.println(reply.path("detail").asText());
        }
    }
}

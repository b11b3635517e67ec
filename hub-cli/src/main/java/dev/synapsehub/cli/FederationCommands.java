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
            FederationCommands.Revoke.class, FederationCommands.Status.class, FederationCommands.Observed.class,
            FederationCommands.Recover.class})
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
        out.println("signing key ids: " + String.join(", ", r.signingKeyIds()));
        out.println("certificate pins: " + String.join(", ", r.certificatePins()));
        out.println("namespaces: " + String.join(", ", r.namespaces()));
        out.println("scope grants: " + r.scopeGrants().size());
        out.println("expires: " + expiry(r.expiresAt()));
        out.println("bundle fingerprint: " + FederationStore.fingerprint(r));
    }

    static PeeringRecord readBundle(Path file) throws TrustFileException {
        try {
            return FederationStore.parseBundle(Files.readAllBytes(file), file);
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
            description = "Per watched peer of a running hub: cursor, lag, last success, clock skew, last error, quarantine.")
    static final class Status extends ObservedQueryCommand {
        @Override
        boolean withClaims() {
            return false;
        }

        @Override
        int report(ObjectNode reply, PrintWriter out) {
            if (reply.path("peers").isEmpty()) {
                out.println("no watched peers");
            }
            for (JsonNode p : reply.path("peers")) {
                out.println(statusLine(p));
            }
            return ExitCodes.OK;
        }
    }

    static String statusLine(JsonNode p) {
        double last = p.path("last_success").asDouble();
        return String.format(Locale.ROOT, "%s: %s cursor %d, lag %d, last success %s, clock skew %s, last error %s%s",
                p.path("peer").asText(), p.path("last_error").isNull() ? (last > 0 ? "reachable," : "not polled yet,")
                        : "FAILING,", p.path("cursor").asLong(), p.path("lag").asLong(),
                last > 0 ? Instant.ofEpochMilli((long) (last * 1000)).toString() : "never",
                p.path("clock_skew_seconds").isNull() ? "unknown" : p.path("clock_skew_seconds").asText() + " s",
                p.path("last_error").isNull() ? "none" : p.path("last_error").asText(),
                p.path("quarantined").asBoolean() ? "; QUARANTINED: " + p.path("quarantine").asText() : "");
    }

    @Command(name = "observed", mixinStandardHelpOptions = true,
            description = "The advisory view (what each watched peer's log asserts; it grants nothing), from a running "
                    + "hub, or offline from a stopped hub's journal with --db.")
    static final class Observed extends ObservedQueryCommand {
        @Option(names = "--db", paramLabel = "FILE", description = "Read the view a hub keeps beside this journal instead.")
        Path db;

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
            try (SqliteMirror mirror = SqliteMirror.open(db)) {
                double now = System.currentTimeMillis() / 1000.0;
                List<PeerView> views = mirror.load();
                ObjectNode reply = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
                var peers = reply.putArray("peers");
                views.forEach(v -> peers.add(ObservedQuery.render(v, now, true)));
                if (client.json) {
                    spec.commandLine().getOut().println(reply);
                    return ExitCodes.OK;
                }
                return report(reply, spec.commandLine().getOut());
            } catch (Exception e) {
                spec.commandLine().getErr().println("synapse-hub: " + e.getMessage());
                return ExitCodes.DATA_ERROR;
            }
        }

        @Override
        int report(ObjectNode reply, PrintWriter out) {
            if (reply.path("peers").isEmpty()) {
                out.println("no watched peers");
            }
            for (JsonNode p : reply.path("peers")) {
                out.println(statusLine(p));
                for (JsonNode c : p.path("claims")) {
                    out.printf(Locale.ROOT, "  %s %s held by %s (namespace '%s', epoch %d, seq %d, observed on %s)%n",
                            c.path("live").asBoolean() ? "live   " : "expired", c.path("task_id").asText(),
                            c.path("owner").asText(), c.path("namespace").asText(), c.path("epoch").asLong(),
                            c.path("seq").asLong(), c.path("observed_on").asText());
                }
            }
            return ExitCodes.OK;
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
        int report(ObjectNode reply, PrintWriter out) {
            out.println(reply.path("detail").asText());
            return reply.path("recovered").asBoolean() ? ExitCodes.OK : ExitCodes.REFUSED;
        }
    }
}

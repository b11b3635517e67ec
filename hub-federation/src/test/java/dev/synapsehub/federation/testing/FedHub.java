package dev.synapsehub.federation.testing;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.federation.FederationExtension;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.SqliteMirror;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.journal.DurableCoordination;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.HubServer;
import dev.synapsehub.net.extension.HubExtensions;
import dev.synapsehub.net.tls.TlsFiles;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;

/**
 * A real journaled hub on a loopback port with native TLS and the federation extension, as the
 * composition root wires one; plus helpers to connect agents and peers to it.
 */
public final class FedHub implements AutoCloseable {
    public static final Duration WAIT = Duration.ofSeconds(10);

    public final Pki.HubCerts certs;
    public final DurableCoordination durable;
    public final HubServer server;
    public final FederationExtension federation;
    private final List<HubClient> clients = new ArrayList<>();

    /** Starts hub {@code certs.hubId()} journaling to {@code db}, its mirror beside it. */
    public FedHub(Pki.HubCerts certs, Path db, FederationSettings settings) throws Exception {
        this(certs, db, settings, b -> b);
    }

    /** Like the above, with the hub configuration adjusted by {@code config} (e.g. an advertised host). */
    public FedHub(Pki.HubCerts certs, Path db, FederationSettings settings,
                  java.util.function.UnaryOperator<HubConfig.Builder> config) throws Exception {
        this(certs, db, settings, config, CoordinationState::new);
    }

    /** Like the above, its coordination state made by {@code state} (e.g. other messaging limits). */
    public FedHub(Pki.HubCerts certs, Path db, FederationSettings settings,
                  java.util.function.UnaryOperator<HubConfig.Builder> config,
                  java.util.function.Supplier<CoordinationState> state) throws Exception {
        this.certs = certs;
        this.durable = DurableCoordination.open(db, Clock.system(), state, ActorSettings.DEFAULTS);
        this.federation = new FederationExtension(settings, durable.journal(), SqliteMirror.open(db));
        ServingTrust trust = settings.trust();
        TlsFiles tls = new TlsFiles(certs.serverFiles().cert(), certs.serverFiles().key(), null);
        if (trust.startupPolicy() != null) {
            tls = tls.withClientCa(trust.startupPolicy().clientCaFile());
        }
        HubConfig hubConfig = config.apply(HubConfig.builder().host("127.0.0.1").port(0).hubId(certs.hubId()).tls(tls)
                .metricsEnabled(true)).build();
        this.server = new HubServer(hubConfig, durable.actor(), Clock.system(), durable.journal(),
                new HubExtensions(List.of(this.federation)));
        server.start();
    }

    /** A hub serving its log under {@code trust}. */
    public static FedHub serving(Pki.HubCerts certs, Path db, ServingTrust trust) throws Exception {
        return new FedHub(certs, db, new FederationSettings(trust, WatchSettings.none(),
                dev.synapsehub.federation.route.NamespaceOwners.none(certs.hubId()),
                dev.synapsehub.federation.route.ForwardSettings.none()));
    }

    /** {@code wss://127.0.0.1:<port>/}. */
    public URI uri() {
        return URI.create("wss://127.0.0.1:" + server.boundPort() + "/");
    }

    /** The pin of this hub's server certificate. */
    public ClientTls pinned() {
        return ClientTls.pinned(certs.server().pin());
    }

    /** An agent (no client certificate) registered as {@code name}. */
    public HubClient agent(String name) throws Exception {
        HubClient c = connect(pinned());
        c.awaitType("welcome", WAIT);
        ObjectNode hb = c.frame(name, "heartbeat");
        c.send(hb);
        return c;
    }

    /** A connection secured as {@code tls} (pin and maybe a client certificate), not yet bound. */
    public HubClient connect(ClientTls tls) throws Exception {
        HubClient c = HubClient.connect(uri(), WAIT, tls);
        clients.add(c);
        return c;
    }

    /** Claims {@code task} as the agent and returns the reply (claim_granted or claim_denied). */
    public static ObjectNode claim(HubClient agent, String name, String task, String... paths) throws TimeoutException {
        ObjectNode f = agent.frame(name, "claim");
        f.put("task_id", task);
        var p = f.putArray("paths");
        for (String s : paths) {
            p.add(s);
        }
        agent.send(f);
        return agent.await(r -> task.equals(r.path("task_id").asText())
                && ("claim_granted".equals(r.path("type").asText()) && name.equals(r.path("owner").asText())
                || "claim_denied".equals(r.path("type").asText())), WAIT);
    }

    @Override
    public void close() throws Exception {
        clients.forEach(HubClient::close);
        server.close();
        durable.actor().close();
    }
}

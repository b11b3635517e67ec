package dev.synapsehub.federation.testing;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.HubServer;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.extension.HubExtensions;
import dev.synapsehub.net.tls.TlsFiles;

import java.net.URI;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A real hub over TLS whose answers to {@code multihub_log_request} are scripted by the test:
 * gapped, malformed, huge or equivocating snapshots, as a faulty peer would send them. It
 * never answers a forwarded claim or operator relay (an owner slower than any bound).
 */
public final class FakePeer implements AutoCloseable {
    private final HubServer server;
    private final CoordinationActor actor;
    public final Pki.HubCerts certs;
    public final AtomicInteger requests = new AtomicInteger();

    /**
     * {@code script} turns each request into the snapshot's members (events, next_cursor,
     * log_end_seq); null sends nothing (a peer that never answers).
     */
    public FakePeer(Pki.HubCerts certs, Function<ObjectNode, ObjectNode> script) throws Exception {
        this.certs = certs;
        actor = new CoordinationActor(new CoordinationState(), new InMemoryJournal(), Clock.system(), ActorSettings.DEFAULTS);
        actor.start();
        HubExtension ext = new AnsweringExtension(type -> "multihub_log_request".equals(type)
                || "multihub_claim_request".equals(type) || "operator_relay_request".equals(type), (hub, r) -> {
            requests.incrementAndGet();
            if (!"multihub_log_request".equals(r.type())) {
                return; // claims and relays: an owner that never answers
            }
            ObjectNode members = script.apply(r.frame());
            if (members == null) {
                return; // a silent peer
            }
            ObjectNode f = hub.frames().envelope(r.sender(), "multihub_log_snapshot", "Multi-hub log snapshot",
                    hub.clock().nowSeconds());
            f.setAll(members);
            hub.outbox().send(r.session(), f);
        });
        server = new HubServer(HubConfig.builder().host("127.0.0.1").port(0).hubId(certs.hubId())
                .tls(new TlsFiles(certs.serverFiles().cert(), certs.serverFiles().key(), null)).build(),
                actor, Clock.system(), null, new HubExtensions(List.of(ext)));
        server.start();
    }

    public URI uri() {
        return URI.create("wss://127.0.0.1:" + server.boundPort() + "/");
    }

    @Override
    public void close() throws Exception {
        server.close();
        actor.close();
    }
}

package dev.synapsehub.federation;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Request;

/**
 * Operator requests taken only from a connection on this machine (recovery, outbound relays),
 * and the {@code multihub_recover_result} answer a single hub and a mesh node both give.
 */
public final class LocalOperator {

    /** The detail a recovery asked from another machine is refused with. */
    public static final String RECOVERY_OFF_MACHINE = "recovery is accepted only from this machine (loopback)";

    private LocalOperator() {
    }

    /** True when {@code host} (a connection's remote address, may be null) is a loopback address. */
    public static boolean onThisMachine(String host) {
        return host != null && (host.startsWith("127.") || host.equals("::1") || host.equals("0:0:0:0:0:0:0:1"));
    }

    /** Answers {@code r} with {@code multihub_recover_result} for {@code peer}, in order on its session. */
    static void answerRecovery(HubServices hub, Request r, String peer, boolean recovered, String detail) {
        ObjectNode f = hub.frames().envelope(r.sender(), "multihub_recover_result", detail, hub.clock().nowSeconds());
        f.put("peer", peer);
        f.put("recovered", recovered);
        f.put("detail", detail);
        hub.outbox().sendInOrder(r.session(), hub.frames().write(f));
    }
}

package dev.synapsehub.mesh;

import java.io.IOException;

/** This node's Raft address could not be bound (another program holds it, or no interface has it). */
public final class RaftAddressUnavailable extends IOException {
    private final transient MeshPeer self;

    RaftAddressUnavailable(MeshPeer self, IOException cause) {
        super("mesh node " + self.id() + " cannot listen on its Raft address " + self.address() + ": "
                + cause.getMessage(), cause);
        this.self = self;
    }

    /** The node whose address it is: its id, host and port as {@code --mesh-peers} lists them. */
    public MeshPeer self() {
        return self;
    }
}

package dev.synapsehub.mesh;

import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.rpc.RpcFactory;
import org.apache.ratis.rpc.RpcType;

/**
 * The Raft transport of a mesh node and of every mesh client (admin, probe, group discovery):
 * Ratis' gRPC, with the TLS contexts built under the hub's one TLS policy ({@link MeshGrpcFactory}).
 * Ratis names the transport in {@link RaftProperties} by class name and creates it by reflection,
 * hence the public no-argument constructor.
 */
public final class MeshTransport implements RpcType {

    /** Ratis creates it by reflection from the name {@link #properties()} records. */
    public MeshTransport() {
    }

    /** New Raft properties naming this transport: every mesh server and client starts from these. */
    public static RaftProperties properties() {
        RaftProperties p = new RaftProperties();
        RaftConfigKeys.Rpc.setType(p, new MeshTransport());
        return p;
    }

    @Override
    public String name() {
        return MeshTransport.class.getName();
    }

    @Override
    public RpcFactory newFactory(Parameters parameters) {
        return new MeshGrpcFactory(parameters);
    }
}

package dev.synapsehub.cli;

import dev.synapsehub.mesh.MeshTls;
import picocli.CommandLine.Option;

import java.nio.file.Path;

/**
 * Mutual TLS on a mesh's Raft transport (docs/mesh.md, "Mutual TLS between nodes"): the same
 * three flags on a node and on the {@code mesh} commands that talk to one.
 */
public final class MeshTlsOptions {
    @Option(names = MeshTls.CERT_FLAG, paramLabel = "PEM",
            description = "Mesh mutual TLS: this node's (or this operator's) certificate, PEM, leaf first, issued by "
                    + MeshTls.CA_FLAG + " and valid for the host in --mesh-peers. With "
                    + MeshTls.KEY_FLAG + " and " + MeshTls.CA_FLAG + "; without all three, Raft traffic is "
                    + "plain gRPC.")
    Path certFile;

    @Option(names = MeshTls.KEY_FLAG, paramLabel = "PEM",
            description = "The private key of " + MeshTls.CERT_FLAG + ": unencrypted PKCS#8 PEM, owner-only.")
    Path keyFile;

    @Option(names = MeshTls.CA_FLAG, paramLabel = "PEM",
            description = "The cluster CA (PEM): every peer and admin client must present a certificate it issued.")
    Path caFile;

    /** True when any of the three flags is given. */
    boolean given() {
        return certFile != null || keyFile != null || caFile != null;
    }

    /**
     * Tells an operator who gave no --mesh-tls-* flags and got no answer that a mesh over mutual TLS is the
     * likely cause: its nodes end a client without a certificate with a bare "network closed".
     */
    void noteWhenNobodyAnswered(java.io.PrintWriter err) {
        if (!given()) {
            err.println("synapse-hub: note: no voter answered; if the mesh runs mutual TLS, give --mesh-tls-certfile, "
                    + "--mesh-tls-keyfile and --mesh-tls-cafile (an operator certificate from the cluster CA)");
        }
    }

    /** The checked files, or null when none is given; throws {@link IllegalArgumentException} for the operator. */
    MeshTls load() {
        return MeshTls.load(certFile, keyFile, caFile);
    }
}

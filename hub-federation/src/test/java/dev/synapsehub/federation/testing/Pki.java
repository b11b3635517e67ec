package dev.synapsehub.federation.testing;

import dev.synapsehub.client.tls.TestCertificates;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The certificates of a small federation, made in the test: one client CA for hub-to-hub
 * identities, and per hub a self-signed server certificate (trusted by pin) and a client
 * certificate issued by the CA, written as owner-only PEM files under {@code dir/<hub>}.
 */
public final class Pki {
    private final Path dir;
    private final TestCertificates.Authority clientCa = TestCertificates.authority("fed-client-ca");
    private final Path clientCaFile;

    public Pki(Path dir) throws IOException {
        this.dir = dir;
        this.clientCaFile = clientCa.writeCertificate(dir, "client-ca");
    }

    /** The CA file client certificates chain to. */
    public Path clientCaFile() {
        return clientCaFile;
    }

    /** The certificate authority (to issue strangers' certificates too). */
    public TestCertificates.Authority clientCa() {
        return clientCa;
    }

    /** A hub's material: server certificate, client certificate, their files. */
    public record HubCerts(String hubId, Path dir, TestCertificates.Identity server, TestCertificates.PemPair serverFiles,
                           TestCertificates.Identity client, TestCertificates.PemPair clientFiles) {
    }

    /** Makes (and writes) the certificates of {@code hubId}. */
    public HubCerts hub(String hubId) throws IOException {
        Path home = Files.createDirectories(dir.resolve(hubId));
        TestCertificates.Identity server = TestCertificates.selfSigned(hubId);
        TestCertificates.Identity client = clientCa.issue(hubId);
        return new HubCerts(hubId, home, server, server.write(home, "server"), client, client.write(home, "client"));
    }
}

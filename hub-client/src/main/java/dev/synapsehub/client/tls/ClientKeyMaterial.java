package dev.synapsehub.client.tls;

/**
 * A client certificate (chain) and its key as bytes already read and checked, so the TLS context
 * is built from exactly what was validated instead of reading the files a second time (a file
 * swapped between the check and the second read would otherwise be presented unchecked).
 *
 * @param certificatePem the PEM certificate chain, leaf first
 * @param keyPem the unencrypted PKCS#8 PEM key
 */
public record ClientKeyMaterial(byte[] certificatePem, byte[] keyPem) {
    public ClientKeyMaterial {
        certificatePem = certificatePem.clone();
        keyPem = keyPem.clone();
    }

    @Override
    public byte[] certificatePem() {
        return certificatePem.clone();
    }

    @Override
    public byte[] keyPem() {
        return keyPem.clone();
    }
}

package dev.synapsehub.net.tls;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.Locale;

/**
 * Whether a private key belongs to a certificate: a random probe signed with the key must verify
 * under the leaf certificate's public key. A TLS library loads a mismatched pair without a word
 * and every handshake then fails, so the pair is checked before it is served.
 */
final class KeyPairMatch {
    private static final String BEGIN = "-----BEGIN PRIVATE KEY-----";
    private static final String END = "-----END PRIVATE KEY-----";

    private KeyPairMatch() {
    }

    /**
     * Checks that {@code keyFile} (unencrypted PKCS#8 PEM) is the key of the first certificate in
     * {@code certFile}.
     *
     * @throws IllegalArgumentException naming both files and the fix when it is not, or cannot be told
     */
    static void check(Path certFile, Path keyFile) {
        X509Certificate leaf;
        PrivateKey key;
        try {
            leaf = leaf(certFile);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot serve native WSS: --tls-certfile " + certFile
                    + " holds no PEM certificate this hub can read (" + e.getMessage() + ")", e);
        }
        try {
            key = privateKey(keyFile, leaf.getPublicKey().getAlgorithm());
        } catch (IOException | GeneralSecurityException e) {
            throw mismatch(certFile, keyFile, "(" + e.getMessage() + ")");
        }
        String algorithm = signatureAlgorithm(leaf.getPublicKey());
        if (algorithm == null) {
            return; // a key type without a probe here: the handshake is the check
        }
        try {
            byte[] probe = new byte[32];
            new SecureRandom().nextBytes(probe);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(leaf.getPublicKey());
            verifier.update(probe);
            if (verifier.verify(signature)) {
                return;
            }
        } catch (GeneralSecurityException e) {
            throw mismatch(certFile, keyFile, "(" + e.getMessage() + ")");
        }
        throw mismatch(certFile, keyFile, "");
    }

    private static IllegalArgumentException mismatch(Path certFile, Path keyFile, String detail) {
        return new IllegalArgumentException("cannot serve native WSS: the key " + keyFile
                + " does not belong to the certificate " + certFile + (detail.isEmpty() ? "" : " " + detail)
                + " — give the key the certificate was issued for (openssl x509 -noout -pubkey -in CERT and "
                + "openssl pkey -pubout -in KEY print the same key)");
    }

    private static X509Certificate leaf(Path certFile) throws IOException, GeneralSecurityException {
        try (var in = Files.newInputStream(certFile)) {
            var all = CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (all.isEmpty()) {
                throw new IOException("no certificate in " + certFile);
            }
            return (X509Certificate) all.iterator().next();
        }
    }

    private static PrivateKey privateKey(Path keyFile, String algorithm) throws IOException, GeneralSecurityException {
        String text = Files.readString(keyFile, StandardCharsets.US_ASCII);
        int begin = text.indexOf(BEGIN);
        int end = text.indexOf(END);
        if (begin < 0 || end < begin) {
            throw new IOException("not an unencrypted PKCS#8 PEM key");
        }
        byte[] der = Base64.getMimeDecoder().decode(text.substring(begin + BEGIN.length(), end));
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
    }

    /** The signature algorithm a probe is signed with for {@code key}'s type; null for a type without one here. */
    private static String signatureAlgorithm(PublicKey key) {
        return switch (key.getAlgorithm().toUpperCase(Locale.ROOT)) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "ED25519", "ED448", "EDDSA" -> key.getAlgorithm();
            case "DSA" -> "SHA256withDSA";
            default -> null;
        };
    }
}

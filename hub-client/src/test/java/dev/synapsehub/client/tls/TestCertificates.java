package dev.synapsehub.client.tls;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Real X.509 certificates made in the test (EC P-256, signed with BouncyCastle): a CA, leaf
 * certificates it issues, and self-signed server certificates for 127.0.0.1, written as the
 * PEM files an operator would pass (certificate, unencrypted PKCS#8 key, mode 0600).
 */
public final class TestCertificates {
    private static final AtomicLong SERIALS = new AtomicLong(System.nanoTime());

    private TestCertificates() {
    }

    /** A certificate with its private key. */
    public record Identity(X509Certificate certificate, PrivateKey key) {
        /** The certificate's pin. */
        public CertificatePin pin() {
            return CertificatePin.of(certificate);
        }

        /** Writes {@code <name>.pem} and {@code <name>.key} (mode 0600) into {@code dir}. */
        public PemPair write(Path dir, String name) throws IOException {
            Path cert = dir.resolve(name + ".pem");
            Path key = dir.resolve(name + ".key");
            writePrivate(cert, pem("CERTIFICATE", encoded(certificate)));
            writePrivate(key, pem("PRIVATE KEY", this.key.getEncoded()));
            return new PemPair(cert, key);
        }
    }

    /** The two files of a written identity. */
    public record PemPair(Path cert, Path key) {
    }

    /** A certificate authority that issues leaf certificates. */
    public record Authority(Identity identity) {
        /** A leaf certificate for {@code commonName}, valid for 127.0.0.1 and localhost. */
        public Identity issue(String commonName) {
            return issue(commonName, Duration.ofDays(30));
        }

        /** A leaf certificate valid from now for {@code validity} (negative: already expired). */
        public Identity issue(String commonName, Duration validity) {
            return build(commonName, keyPair(), identity, false, validity);
        }

        /** Writes the CA certificate as {@code <name>.pem} (mode 0600). */
        public Path writeCertificate(Path dir, String name) throws IOException {
            Path cert = dir.resolve(name + ".pem");
            writePrivate(cert, pem("CERTIFICATE", encoded(identity.certificate())));
            return cert;
        }
    }

    /** A new CA. */
    public static Authority authority(String commonName) {
        KeyPair pair = keyPair();
        return new Authority(build(commonName, pair, null, true, Duration.ofDays(30)));
    }

    /** A self-signed certificate for 127.0.0.1 and localhost (a hub's server certificate, trusted by pin). */
    public static Identity selfSigned(String commonName) {
        return build(commonName, keyPair(), null, false, Duration.ofDays(30));
    }

    /** As {@link #selfSigned}, on an RSA key (static-RSA cipher suites need one to be negotiable at all). */
    public static Identity selfSignedRsa(String commonName) {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
            g.initialize(2048, new SecureRandom());
            return build(commonName, g.generateKeyPair(), null, false, Duration.ofDays(30));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Identity build(String commonName, KeyPair pair, Identity issuer, boolean ca, Duration validity) {
        try {
            Instant now = Instant.now();
            Instant notBefore = validity.isNegative() ? now.plus(validity).minus(Duration.ofDays(1)) : now.minusSeconds(60);
            Instant notAfter = validity.isNegative() ? now.plus(validity) : now.plus(validity);
            X500Name subject = new X500Name("CN=" + commonName);
            X500Name issuerName = issuer == null ? subject
                    : new X500Name(issuer.certificate().getSubjectX500Principal().getName());
            JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(issuerName,
                    BigInteger.valueOf(SERIALS.incrementAndGet()), Date.from(notBefore), Date.from(notAfter),
                    subject, pair.getPublic());
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
            if (ca) {
                b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            } else {
                b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
                    new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
                    new GeneralName(GeneralName.dNSName, "localhost")}));
            }
            PrivateKey signingKey = issuer == null ? pair.getPrivate() : issuer.key();
            ContentSigner signer = new JcaContentSignerBuilder(
                    "RSA".equals(signingKey.getAlgorithm()) ? "SHA256withRSA" : "SHA256withECDSA").build(signingKey);
            X509Certificate cert = new JcaX509CertificateConverter().getCertificate(b.build(signer));
            return new Identity(cert, pair.getPrivate());
        } catch (Exception e) {
            throw new IllegalStateException("cannot make a test certificate", e);
        }
    }

    private static KeyPair keyPair() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"), new SecureRandom());
            return g.generateKeyPair();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] encoded(X509Certificate c) {
        try {
            return c.getEncoded();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String pem(String label, byte[] der) {
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
        return "-----BEGIN " + label + "-----\n" + body + "\n-----END " + label + "-----\n";
    }

    /** A trust manager that trusts every server (tests that check something other than server trust). */
    public static javax.net.ssl.X509TrustManager trustAll() {
        return new javax.net.ssl.X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        };
    }

    /** Writes {@code text} to {@code file} readable by its owner only. */
    public static void writePrivate(Path file, String text) throws IOException {
        Files.writeString(file, text, StandardCharsets.US_ASCII);
        if (file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        }
    }
}

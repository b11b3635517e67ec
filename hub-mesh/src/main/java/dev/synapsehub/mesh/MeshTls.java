package dev.synapsehub.mesh;

import dev.synapsehub.client.tls.PemFiles;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;

import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Mutual TLS on a mesh's Raft transport (seed 001 §15): this node's certificate and key, and
 * the cluster CA that every peer's certificate (and every admin client's) must chain to. Loaded
 * and checked once at start ({@link #load}), so a mistake is a clear refusal, not a cluster that
 * silently cannot talk.
 */
public final class MeshTls {
    /** The operator flags, named in every refusal. */
    public static final String CERT_FLAG = "--mesh-tls-certfile";
    /** See {@link #CERT_FLAG}. */
    public static final String KEY_FLAG = "--mesh-tls-keyfile";
    /** See {@link #CERT_FLAG}. */
    public static final String CA_FLAG = "--mesh-tls-cafile";

    private static final Pattern PEM = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----\\s*([A-Za-z0-9+/=\\s]+?)\\s*-----END \\1-----");
    private static final long MAX_FILE_BYTES = 1 << 20;

    private final Path certFile;
    private final Path keyFile;
    private final Path caFile;
    private final List<X509Certificate> chain;
    private final PrivateKey key;
    private final List<X509Certificate> authorities;

    private MeshTls(Path certFile, Path keyFile, Path caFile, List<X509Certificate> chain, PrivateKey key,
                    List<X509Certificate> authorities) {
        this.certFile = certFile;
        this.keyFile = keyFile;
        this.caFile = caFile;
        this.chain = List.copyOf(chain);
        this.key = key;
        this.authorities = List.copyOf(authorities);
    }

    /**
     * Loads and checks the three files: all or none (null), each a readable regular file, the key
     * owner-only and unencrypted PKCS#8 and matching the certificate, the certificate valid now
     * and issued by the CA (else every peer would refuse this node).
     *
     * @return null when none of the three is given (plain gRPC)
     * @throws IllegalArgumentException naming the flag and file at fault, and what to do
     */
    public static MeshTls load(Path certFile, Path keyFile, Path caFile) {
        if (certFile == null && keyFile == null && caFile == null) {
            return null;
        }
        if (certFile == null || keyFile == null || caFile == null) {
            List<String> missing = new ArrayList<>();
            if (certFile == null) {
                missing.add(CERT_FLAG);
            }
            if (keyFile == null) {
                missing.add(KEY_FLAG);
            }
            if (caFile == null) {
                missing.add(CA_FLAG);
            }
            throw new IllegalArgumentException(String.join(", ", missing) + " missing: mesh mutual TLS needs "
                    + CERT_FLAG + " (this node's certificate), " + KEY_FLAG + " (its private key) and " + CA_FLAG
                    + " (the cluster CA every peer's certificate must chain to), all three or none");
        }
        readable(CERT_FLAG, certFile);
        readable(KEY_FLAG, keyFile);
        readable(CA_FLAG, caFile);
        ownerOnly(keyFile);
        List<X509Certificate> chain = certificates(CERT_FLAG, certFile);
        List<X509Certificate> authorities = certificates(CA_FLAG, caFile);
        X509Certificate leaf = chain.get(0);
        try {
            leaf.checkValidity();
        } catch (CertificateExpiredException e) {
            throw new IllegalArgumentException(CERT_FLAG + " " + certFile + " expired on " + leaf.getNotAfter().toInstant()
                    + "; issue a new one from the cluster CA", e);
        } catch (CertificateNotYetValidException e) {
            throw new IllegalArgumentException(CERT_FLAG + " " + certFile + " is not valid before "
                    + leaf.getNotBefore().toInstant() + " (check this host's clock)", e);
        }
        PrivateKey key = privateKey(keyFile, leaf.getPublicKey());
        matches(key, leaf.getPublicKey(), certFile, keyFile);
        issuedBy(chain, authorities, certFile, caFile);
        return new MeshTls(certFile, keyFile, caFile, chain, key, authorities);
    }

    /**
     * Ratis parameters for the server, its peer clients and the admin/client channels alike:
     * every connection presents this node's certificate and accepts only peers the CA issued.
     *
     * @param tls the transport security, or null for plain gRPC (empty parameters)
     */
    public static Parameters parameters(MeshTls tls) {
        Parameters p = new Parameters();
        if (tls != null) {
            GrpcConfigKeys.TLS.setConf(p, tls.grpc());
        }
        return p;
    }

    private GrpcTlsConfig grpc() {
        Managers m = managers();
        KeyManager keys = m.keyManager() instanceof javax.net.ssl.X509ExtendedKeyManager x
                ? new PresentedKey(() -> x) : m.keyManager(); // its certificate, whatever CAs a server lists
        return new GrpcTlsConfig(keys, m.trustManager(), true); // true: the server requires a client certificate
    }

    /** This node's key manager and the cluster CA's trust manager, built from the loaded files. */
    record Managers(KeyManager keyManager, TrustManager trustManager) {
    }

    /** Builds the managers the transport hands every handshake (also on a reload, {@link MeshTlsReload}). */
    Managers managers() {
        try {
            // JKS, not the default PKCS#12: a PKCS#12 store derives a PBE key (10,000 PBKDF2 rounds) to
            // hold the key and again to read it; this store never leaves memory, so that guards nothing
            KeyStore keys = KeyStore.getInstance("JKS");
            keys.load(null, null);
            char[] none = new char[0];
            keys.setKeyEntry("node", key, none, chain.toArray(new X509Certificate[0]));
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, none);
            KeyStore trusted = KeyStore.getInstance("JKS");
            trusted.load(null, null);
            for (int i = 0; i < authorities.size(); i++) {
                trusted.setCertificateEntry("ca" + i, authorities.get(i));
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trusted);
            return new Managers(kmf.getKeyManagers()[0], tmf.getTrustManagers()[0]);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("cannot build mesh TLS from " + certFile + ", " + keyFile + " and "
                    + caFile + ": " + e.getMessage(), e);
        }
    }

    /** This node's certificate file. */
    public Path certFile() {
        return certFile;
    }

    /** This node's key file. */
    public Path keyFile() {
        return keyFile;
    }

    /** The cluster CA file. */
    public Path caFile() {
        return caFile;
    }

    /** The subject of this node's certificate. */
    public String subject() {
        return chain.get(0).getSubjectX500Principal().getName();
    }

    /** One line for the start-up log (no key material). */
    public String describe() {
        return "mutual TLS as " + subject() + " (" + certFile + "), peers must chain to " + caFile;
    }

    private static void readable(String flag, Path file) {
        if (!Files.exists(file)) {
            throw new IllegalArgumentException(flag + " " + file + ": no such file");
        }
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException(flag + " " + file + ": not a regular file");
        }
        if (!Files.isReadable(file)) {
            throw new IllegalArgumentException(flag + " " + file + ": not readable by this user");
        }
        try {
            if (Files.size(file) > MAX_FILE_BYTES) {
                throw new IllegalArgumentException(flag + " " + file + ": larger than 1 MiB, not a PEM file");
            }
        } catch (IOException e) {
            throw new IllegalArgumentException(flag + " " + file + ": " + e.getMessage(), e);
        }
    }

    /** The node's private key must not be readable by anyone else (as the federation client key). */
    private static void ownerOnly(Path keyFile) {
        if (!keyFile.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            return;
        }
        try {
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(keyFile, LinkOption.NOFOLLOW_LINKS);
            Set<PosixFilePermission> open = new HashSet<>(perms);
            open.retainAll(Set.of(PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
                    PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE));
            if (!open.isEmpty()) {
                throw new IllegalArgumentException(KEY_FLAG + " " + keyFile + " is readable or writable by others; "
                        + "make it owner-only (chmod 600)");
            }
        } catch (IOException e) {
            throw new IllegalArgumentException(KEY_FLAG + " " + keyFile + ": " + e.getMessage(), e);
        }
    }

    private static List<X509Certificate> certificates(String flag, Path file) {
        try {
            return PemFiles.certificates(file);
        } catch (IOException e) {
            throw new IllegalArgumentException(flag + " " + file + ": " + e.getMessage()
                    + " (expected PEM certificates, BEGIN CERTIFICATE)", e);
        }
    }

    private static PrivateKey privateKey(Path file, PublicKey certified) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalArgumentException(KEY_FLAG + " " + file + ": " + e.getMessage(), e);
        }
        Matcher m = PEM.matcher(text);
        if (!m.find()) {
            throw new IllegalArgumentException(KEY_FLAG + " " + file + " holds no PEM block; expected an unencrypted "
                    + "PKCS#8 key (BEGIN PRIVATE KEY)");
        }
        String label = m.group(1);
        if (!label.equals("PRIVATE KEY")) {
            String fix = label.equals("ENCRYPTED PRIVATE KEY")
                    ? "decrypt it: openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8"
                    : "convert it: openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8";
            throw new IllegalArgumentException(KEY_FLAG + " " + file + " is a " + label + ", not an unencrypted PKCS#8 "
                    + "key (BEGIN PRIVATE KEY); " + fix);
        }
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(m.group(2));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(KEY_FLAG + " " + file + ": the PEM body is not base64", e);
        }
        try {
            return KeyFactory.getInstance(certified.getAlgorithm()).generatePrivate(new PKCS8EncodedKeySpec(der));
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException(KEY_FLAG + " " + file + " is not a " + certified.getAlgorithm()
                    + " PKCS#8 key, the algorithm of " + CERT_FLAG + ": " + e.getMessage(), e);
        }
    }

    /** Signs a random challenge with the key and checks it with the certificate's public key. */
    private static void matches(PrivateKey key, PublicKey certified, Path certFile, Path keyFile) {
        String algorithm = switch (certified.getAlgorithm()) {
            case "EC" -> "SHA256withECDSA";
            case "RSA" -> "SHA256withRSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            default -> throw new IllegalArgumentException(CERT_FLAG + " " + certFile + ": unsupported key algorithm "
                    + certified.getAlgorithm() + " (use EC, RSA or Ed25519)");
        };
        try {
            byte[] challenge = new byte[32];
            new SecureRandom().nextBytes(challenge);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(challenge);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(certified);
            verifier.update(challenge);
            if (!verifier.verify(signature)) {
                throw new IllegalArgumentException(KEY_FLAG + " " + keyFile + " is not the private key of "
                        + CERT_FLAG + " " + certFile);
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException(KEY_FLAG + " " + keyFile + " does not fit " + CERT_FLAG + " "
                    + certFile + ": " + e.getMessage(), e);
        }
    }

    /** The node's chain must validate against the cluster CA: its peers check exactly that. */
    private static void issuedBy(List<X509Certificate> chain, List<X509Certificate> authorities, Path certFile,
                                 Path caFile) {
        try {
            Set<TrustAnchor> anchors = new HashSet<>();
            for (X509Certificate ca : authorities) {
                anchors.add(new TrustAnchor(ca, null));
            }
            List<X509Certificate> path = new ArrayList<>(chain);
            path.removeIf(authorities::contains);
            PKIXParameters params = new PKIXParameters(anchors);
            params.setRevocationEnabled(false);
            CertPathValidator.getInstance("PKIX").validate(
                    CertificateFactory.getInstance("X.509").generateCertPath(path), params);
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new IllegalArgumentException(CERT_FLAG + " " + certFile + " is not issued by the cluster CA in "
                    + CA_FLAG + " " + caFile + " (" + e.getMessage() + "); every peer would refuse this node", e);
        }
    }
}

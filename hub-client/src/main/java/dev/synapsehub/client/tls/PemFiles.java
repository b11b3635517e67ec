package dev.synapsehub.client.tls;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;

/** Reading PEM certificates, and operator-facing explanations of PEM loading failures. */
public final class PemFiles {
    private PemFiles() {
    }

    /** The certificates in a PEM (or DER) file, leaf first. */
    public static List<X509Certificate> certificates(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            List<X509Certificate> out = new ArrayList<>();
            for (var c : factory.generateCertificates(in)) {
                out.add((X509Certificate) c);
            }
            if (out.isEmpty()) {
                throw new IOException(file + " holds no certificate");
            }
            return out;
        } catch (CertificateException e) {
            throw new IOException(file + " is not a PEM or DER certificate: " + e.getMessage(), e);
        }
    }

    /** The pin of the first (leaf) certificate in {@code file}. */
    public static CertificatePin pinOf(Path file) throws IOException {
        return CertificatePin.of(certificates(file).get(0));
    }

    /** A failure message that says which file is likely at fault and how to fix the usual mistake. */
    public static String explainFailure(Exception e, Path certFile, Path keyFile) {
        String detail = e.getMessage() == null ? e.toString() : e.getMessage();
        if (keyFile != null && (detail.contains("key") || detail.contains("PKCS"))) {
            return detail + " (the key file " + keyFile + " must be an unencrypted PKCS#8 PEM key, BEGIN PRIVATE KEY;"
                    + " convert with: openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8)";
        }
        return certFile == null ? detail : detail + " (certificate " + certFile + ", key " + keyFile + ")";
    }
}

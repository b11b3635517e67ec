package dev.synapsehub.client.tls;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.HexFormat;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * A certificate pin (wire contract §17 A13 F4): {@code sha256:} plus the lowercase hex of the
 * SHA-256 of the whole leaf certificate in DER, not of its public key.
 * {@code openssl x509 -in cert.pem -outform DER | sha256sum} computes the same value.
 */
public record CertificatePin(String text) {
    private static final String PREFIX = "sha256:";
    private static final Pattern HEX64 = Pattern.compile("[0-9a-fA-F]{64}");

    public CertificatePin {
        if (text == null || !text.startsWith(PREFIX) || !HEX64.matcher(text.substring(PREFIX.length())).matches()) {
            throw new IllegalArgumentException("pin must be sha256:<64 hex digits>, got '" + text + "'");
        }
    }

    /**
     * Parses an operator-supplied pin. The client side compares pins ignoring case, so the
     * hex is normalised to lowercase here.
     *
     * @throws IllegalArgumentException naming the expected form
     */
    public static CertificatePin parse(String text) {
        String t = text == null ? null : text.strip();
        if (t != null && t.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) {
            t = PREFIX + t.substring(PREFIX.length()).toLowerCase(Locale.ROOT);
        }
        return new CertificatePin(t);
    }

    /** True when {@code text} is a well-formed pin with lowercase hex (the serving side's exact form). */
    public static boolean isCanonical(String text) {
        try {
            return new CertificatePin(text).text().equals(text) && text.equals(text.toLowerCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** The pin of {@code certificate}. */
    public static CertificatePin of(X509Certificate certificate) {
        try {
            return ofDer(certificate.getEncoded());
        } catch (CertificateEncodingException e) {
            throw new IllegalArgumentException("cannot encode the certificate: " + e.getMessage(), e);
        }
    }

    /** The pin of a DER-encoded certificate. */
    public static CertificatePin ofDer(byte[] der) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(der);
            return new CertificatePin(PREFIX + HexFormat.of().formatHex(digest));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** True when {@code certificate} has this pin (hex compared ignoring case, as a client does). */
    public boolean matches(X509Certificate certificate) {
        return of(certificate).text().equalsIgnoreCase(text);
    }

    @Override
    public String toString() {
        return text;
    }
}

package dev.synapsehub.client.tls;

import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;

import java.util.List;
import java.util.Locale;

/**
 * Which TLS implementation the hub's contexts use, and the one TLS policy every context gets.
 * BoringSSL (netty-tcnative) where its native library loads, else the JDK's. The JDK's AES-GCM is
 * Java code that runs interpreted, then in C1, until C2 has compiled it: a freshly started follower
 * catching up a peer over TLS spent about a fifth to a quarter of its CPU there (docs/benchmarks.md,
 * "a cold follower"). BoringSSL runs at full speed from the first byte. {@code -Dsynapsehub.tls}
 * takes {@code jdk} or {@code openssl} (also {@code boringssl}), in any case; unset means BoringSSL
 * where it loads.
 *
 * <p>BoringSSL does not read the JVM's TLS policy ({@code jdk.tls.disabledAlgorithms} in
 * {@code java.security}), and Netty's default OpenSSL cipher list has static-RSA (no forward secrecy)
 * and CBC-SHA1 suites. So every context, on either engine, is given {@link #PROTOCOLS} and
 * {@link #CIPHERS} explicitly by {@link #apply}.
 */
public final class TlsEngine {
    /** The system property that picks the engine. */
    public static final String PROPERTY = "synapsehub.tls";

    /** The protocols every context enables. */
    public static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

    /**
     * The cipher suites every context enables: the TLS 1.3 suites, and for TLS 1.2 only ephemeral
     * ECDHE key exchange (forward secrecy) with an AEAD cipher (AES-GCM, ChaCha20-Poly1305). No
     * static RSA, no CBC, no SHA-1 MAC.
     */
    public static final List<String> CIPHERS = List.of(
            "TLS_AES_128_GCM_SHA256",
            "TLS_AES_256_GCM_SHA384",
            "TLS_CHACHA20_POLY1305_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256");

    /**
     * The type of the in-memory key store Netty builds from a PEM certificate and key, once per
     * context. Never written anywhere, so its key protection guards nothing; the JDK's default
     * (PKCS#12) protects the key with 10,000 rounds of PBKDF2-HMAC-SHA256 on every store and read,
     * three times per start of a following hub (its server context, its client identity check,
     * its peer link's context): about 0.3 s of interpreted SHA-256 on its start-up path and, since
     * that loop got hot, 1-2.5 s of C2 compiling it (docs/benchmarks.md, "Cold catch-up, fourth
     * pass"). JKS protects a key with a few SHA-1 rounds. (Netty's JDK server context ignores the
     * type: a server with a client CA, on the JDK's engine, still builds a PKCS#12 store.)
     */
    static final String KEY_STORE_TYPE = "JKS";

    private TlsEngine() {
    }

    /** The engine asked for by {@code -Dsynapsehub.tls}. */
    public enum Choice {
        /** Unset: BoringSSL where it loads, else the JDK's. */
        DEFAULT,
        /** {@code jdk}: the JDK's TLS. */
        JDK,
        /** {@code openssl} or {@code boringssl}: BoringSSL, falling back to the JDK's when it does not load. */
        OPENSSL
    }

    /**
     * Reads {@code value} (the property's text, or null when unset).
     *
     * @throws IllegalArgumentException naming the accepted values for anything else
     */
    public static Choice parse(String value) {
        if (value == null) {
            return Choice.DEFAULT;
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "jdk" -> Choice.JDK;
            case "openssl", "boringssl" -> Choice.OPENSSL;
            default -> throw new IllegalArgumentException("-D" + PROPERTY + "=" + value
                    + " is not a TLS engine: use jdk, openssl or boringssl (or leave it unset)");
        };
    }

    /**
     * The provider for a new context: {@link SslProvider#OPENSSL} when available and not turned off.
     *
     * @throws IllegalArgumentException when {@code -Dsynapsehub.tls} has an unknown value
     */
    public static SslProvider provider() {
        return parse(System.getProperty(PROPERTY)) != Choice.JDK && OpenSsl.isAvailable()
                ? SslProvider.OPENSSL : SslProvider.JDK;
    }

    /**
     * One line saying which engine is in use and why (for the start-up log), with BoringSSL's
     * unavailability cause when it was wanted but did not load.
     *
     * @throws IllegalArgumentException when {@code -Dsynapsehub.tls} has an unknown value
     */
    public static String describe() {
        Choice choice = parse(System.getProperty(PROPERTY));
        if (choice == Choice.JDK) {
            return "TLS engine: JDK (-D" + PROPERTY + "=jdk)";
        }
        if (OpenSsl.isAvailable()) {
            return "TLS engine: BoringSSL (netty-tcnative " + OpenSsl.versionString() + ")";
        }
        return "TLS engine: JDK, BoringSSL did not load: " + OpenSsl.unavailabilityCause();
    }

    /**
     * Sets {@code provider}, {@link #PROTOCOLS} and {@link #CIPHERS} on {@code builder}: every
     * context of the hub is built through here so both engines refuse the same suites.
     */
    public static SslContextBuilder apply(SslContextBuilder builder, SslProvider provider) {
        // SupportedCipherSuiteFilter drops a listed suite an engine lacks instead of failing the
        // build; it never adds one that is not listed
        return builder.sslProvider(provider).protocols(PROTOCOLS).ciphers(CIPHERS, SupportedCipherSuiteFilter.INSTANCE)
                .keyStoreType(KEY_STORE_TYPE);
    }

    /** {@link #apply(SslContextBuilder, SslProvider)} with {@link #provider()}. */
    public static SslContextBuilder apply(SslContextBuilder builder) {
        return apply(builder, provider());
    }
}

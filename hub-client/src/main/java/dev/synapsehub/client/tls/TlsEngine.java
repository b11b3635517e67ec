package dev.synapsehub.client.tls;

import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslProvider;

/**
 * Which TLS implementation the hub's contexts use: BoringSSL (netty-tcnative) where its native
 * library loads, else the JDK's. The JDK's AES-GCM is Java code that runs interpreted, then in
 * C1, until C2 has compiled it: a freshly started follower catching up a peer over TLS spent
 * about a third of its CPU there (docs/benchmarks.md, "a cold follower"). BoringSSL runs at full
 * speed from the first byte. Both are configured the same (protocols, pins, trust managers, client
 * certificates); {@code -Dsynapsehub.tls=jdk} keeps the JDK's.
 */
public final class TlsEngine {
    private TlsEngine() {
    }

    /** The provider for a new context: {@link SslProvider#OPENSSL} when available and not turned off. */
    public static SslProvider provider() {
        return !"jdk".equals(System.getProperty("synapsehub.tls")) && OpenSsl.isAvailable()
                ? SslProvider.OPENSSL : SslProvider.JDK;
    }
}

package dev.synapsehub.mesh;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.function.Supplier;

/**
 * The key manager a mesh connection presents its certificate with: the one {@code keys} gives
 * now (a reload may swap it), and as a client its certificate whatever CA names the server lists.
 * A node or operator holds one certificate; a server keeps listing the CAs it started with (the
 * TLS library reads them once), so after a CA rotation the usual filter by those names would
 * leave a client whose certificate the new CA issued presenting none, and refused.
 */
final class PresentedKey extends X509ExtendedKeyManager {
    private final Supplier<X509ExtendedKeyManager> keys;

    PresentedKey(Supplier<X509ExtendedKeyManager> keys) {
        this.keys = keys;
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
        return keys.get().getClientAliases(keyType, issuers);
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
        X509ExtendedKeyManager k = keys.get();
        String alias = k.chooseClientAlias(keyType, issuers, socket);
        return alias != null || issuers == null ? alias : k.chooseClientAlias(keyType, null, socket);
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
        X509ExtendedKeyManager k = keys.get();
        String alias = k.chooseEngineClientAlias(keyType, issuers, engine);
        return alias != null || issuers == null ? alias : k.chooseEngineClientAlias(keyType, null, engine);
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
        return keys.get().getServerAliases(keyType, issuers);
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        return keys.get().chooseServerAlias(keyType, issuers, socket);
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
        return keys.get().chooseEngineServerAlias(keyType, issuers, engine);
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        return keys.get().getCertificateChain(alias);
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
        return keys.get().getPrivateKey(alias);
    }
}

package dev.synapsehub.client.tls;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;

/**
 * Trusts exactly the server whose leaf certificate has the configured pin, and nothing else.
 * CA and host name are not checked (contract F4: a pinned route skips them); the pin is checked
 * during the handshake, so a mismatch fails the handshake before any frame is sent.
 */
final class PinnedTrustManager extends X509ExtendedTrustManager {
    private final CertificatePin pin;

    PinnedTrustManager(CertificatePin pin) {
        this.pin = pin;
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        if (chain == null || chain.length == 0) {
            throw new CertificateException("the server presented no certificate");
        }
        CertificatePin live = CertificatePin.of(chain[0]);
        if (!live.text().equalsIgnoreCase(pin.text())) {
            throw new CertificateException("server certificate pin mismatch: expected " + pin + ", got " + live);
        }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        checkServerTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        checkServerTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        throw new CertificateException("a client-side trust manager does not verify clients");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
        checkClientTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
        checkClientTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return new X509Certificate[0];
    }
}

package dev.synapsehub.client;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;

/**
 * Names a failed TLS handshake by its reason. The JDK's engine puts a trust manager's refusal
 * ("server certificate pin mismatch: ...") in its own exception's message; BoringSSL's engine
 * (netty-tcnative) reports it as "General OpenSslEngine problem" with the refusal only as a
 * cause, so a caller printing the message (the CLI, a peer's status) would lose the reason.
 */
final class TlsRefusal {
    private TlsRefusal() {
    }

    /**
     * {@code failure} itself when it is not a TLS failure or its message already says its root
     * cause's; else an {@link SSLHandshakeException} saying the root cause, caused by {@code failure}.
     */
    static Throwable named(Throwable failure) {
        boolean tls = false;
        Throwable root = failure;
        for (int depth = 0; depth < 16; depth++) { // a cause chain is short; the bound guards a cycle
            tls |= root instanceof SSLException;
            if (root.getCause() == null || root.getCause() == root) {
                break;
            }
            root = root.getCause();
        }
        String reason = root.getMessage();
        String said = failure.getMessage();
        if (!tls || root == failure || reason == null || said != null && said.contains(reason)) {
            return failure;
        }
        SSLHandshakeException named = new SSLHandshakeException(reason);
        named.initCause(failure);
        return named;
    }
}

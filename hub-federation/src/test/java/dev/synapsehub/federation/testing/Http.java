package dev.synapsehub.federation.testing;

import dev.synapsehub.client.tls.TestCertificates;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** GETs an HTTP path of a TLS test hub (its certificate is self-signed; the test trusts it). */
public final class Http {
    private Http() {
    }

    /** The body of {@code GET https://127.0.0.1:<port><path>}. */
    public static String get(FedHub hub, String path) throws Exception {
        return get(hub.server.boundPort(), path);
    }

    /** The body of {@code GET https://127.0.0.1:<port><path>}. */
    public static String get(int port, String path) throws Exception {
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, new TrustManager[] {TestCertificates.trustAll()}, null);
        HttpClient client = HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5)).GET().build();
        return client.send(request, HttpResponse.BodyHandlers.ofString()).body();
    }
}

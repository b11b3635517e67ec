package dev.synapsehub.mesh;

import org.apache.ratis.protocol.exceptions.AlreadyClosedException;

import java.net.ConnectException;

/** What a failed send of a Raft client request tells about whether the request left this node. */
final class SendFailures {
    private SendFailures() {
    }

    /**
     * True when the request never left this node: the channel never connected, or the client
     * refused it on a stream that had already ended (the node it was addressed to died or reset it
     * since the last request): Ratis' gRPC client then fails it at once with "… is closed." (the
     * stream's replies closed) or "…: the stream is closed." (its request stream gone), before
     * writing anything. A stream that ends with a request on it fails that request with "…: Stream
     * &lt;event&gt;: no reply …" or the stream's own error, and that request may have arrived.
     */
    static boolean neverLeft(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof ConnectException || t instanceof AlreadyClosedException
                    && String.valueOf(t.getMessage()).endsWith(" is closed.")) {
                return true;
            }
        }
        return false;
    }
}

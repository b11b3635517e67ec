package dev.synapsehub.mesh;

import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.StatusException;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;

import java.net.ConnectException;

/** What a failed send of a Raft client request tells about whether the request left this node. */
final class SendFailures {
    private SendFailures() {
    }

    /**
     * True when the request may be sent again: the node refused it as not leading or not ready
     * (Ratis' client fails every request on the stream with the refusal one reply carried), the
     * channel could not connect, or the stream closed or broke under it. Only {@link #neverLeft}
     * proves it never arrived; the others fail requests the node may have taken, so a resend must
     * be safe to run twice (a forward's intent id) or go to that node alone (an ask).
     */
    static boolean resendable(Throwable failure) {
        if (streamBroke(failure)) {
            return true;
        }
        return causedBy(failure, t -> t instanceof NotLeaderException || t instanceof LeaderNotReadyException
                || t instanceof ConnectException || t instanceof AlreadyClosedException);
    }

    /** True when the channel could not connect: the node is not listening (down, or not started again yet). */
    static boolean connectionRefused(Throwable failure) {
        return causedBy(failure, t -> t instanceof ConnectException);
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
        return connectionRefused(failure) || causedBy(failure, t -> t instanceof AlreadyClosedException
                && String.valueOf(t.getMessage()).endsWith(" is closed."));
    }

    /**
     * True when the stream the request was on broke with a gRPC status after the request may have
     * left (the node shut down, CANCELLED, or its connection died, UNAVAILABLE): Ratis' client
     * fails every request in flight on the stream with an IOException around that status, answered
     * or not. Not a connection that never opened ({@link #neverLeft}), not a deadline (a slow node,
     * whose failure stays a timeout), and no other status (a refused handshake, a message over the
     * size limit: the same again on every attempt, so an unknown outcome at once as before).
     */
    static boolean streamBroke(Throwable failure) {
        if (neverLeft(failure)) {
            return false;
        }
        return causedBy(failure, t -> {
            Status status = t instanceof StatusRuntimeException s ? s.getStatus()
                    : t instanceof StatusException s ? s.getStatus() : null;
            return status != null && (status.getCode() == Status.Code.CANCELLED
                    || status.getCode() == Status.Code.UNAVAILABLE);
        });
    }

    /** True when {@code failure} or one of its causes is {@code what}. */
    private static boolean causedBy(Throwable failure, java.util.function.Predicate<Throwable> what) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (what.test(t)) {
                return true;
            }
        }
        return false;
    }
}

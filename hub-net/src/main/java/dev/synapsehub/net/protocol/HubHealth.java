package dev.synapsehub.net.protocol;

import java.util.List;

/**
 * The hub's health as {@code /health} reports it: {@code ok}; {@code degraded} (serving, but an
 * operator should look); or {@code failed} (not serving its purpose: answered with HTTP 503 so
 * that a probe or load balancer acts on it).
 *
 * @param status the verdict
 * @param reasons why it is not ok, as stable snake_case words (empty when ok)
 */
public record HubHealth(Status status, List<String> reasons) {
    /** The three verdicts, worst last. */
    public enum Status {
        OK, DEGRADED, FAILED;

        /** The word on the wire. */
        public String word() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public HubHealth {
        reasons = List.copyOf(reasons);
    }

    /** 503 when failed, else 200 (a degraded hub still serves). */
    public int httpStatus() {
        return status == Status.FAILED ? 503 : 200;
    }
}

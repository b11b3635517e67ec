package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.LedgerProgressCommand;
import dev.synapsehub.core.command.LedgerTaskCommand;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.assertj.core.api.Assertions.assertThat;

/** The one redactor mesh log lines go through: ids and kinds stay, payload text goes (seed 001 §15). */
class LogRedactorTest {
    private static final String SECRET = "sk-live-secret-0042";

    @Test
    void aRequestIsDescribedByItsKindAgentAndTaskOnly() {
        CheckpointCommand checkpoint = new CheckpointCommand("alice", "T1", SECRET, 3L);
        assertThat(checkpoint.toString()).as("what a careless log line would print").contains(SECRET);
        assertThat(LogRedactor.describe(checkpoint)).isEqualTo("CheckpointCommand by alice on T1");
        assertThat(LogRedactor.describe(new LedgerProgressCommand("bob", "B2", "note", SECRET)))
                .isEqualTo("LedgerProgressCommand by bob on B2");
        assertThat(LogRedactor.describe(LedgerTaskCommand.of("carol", "B3", SECRET)))
                .isEqualTo("LedgerTaskCommand by carol on B3");
        Mutation keyed = new Mutation(checkpoint, new Idempotency(SECRET, SECRET, TestEdge.renderer(null)), null);
        assertThat(LogRedactor.describe(keyed)).isEqualTo("CheckpointCommand by alice on T1 (keyed)")
                .doesNotContain(SECRET);
    }

    @Test
    void failureTextsLoseEveryQuotedLiteralAndStayShort() {
        String jackson = "malformed CheckpointCommand: Cannot deserialize value of type `java.lang.Long` from String \""
                + SECRET + "\": not a valid `java.lang.Long` value";
        assertThat(LogRedactor.scrub(jackson)).isEqualTo("malformed CheckpointCommand: Cannot deserialize value of "
                + "type `java.lang.Long` from String \"<redacted>\": not a valid `java.lang.Long` value");
        assertThat(LogRedactor.scrub("{\"checkpoint\":\"" + SECRET + "\",\"note\":\"a \\\"quoted\\\" " + SECRET + "\"}"))
                .isEqualTo("{\"<redacted>\":\"<redacted>\",\"<redacted>\":\"<redacted>\"}");
        assertThat(LogRedactor.scrub("cut off: \"" + SECRET)).isEqualTo("cut off: \"<redacted>\"");
        assertThat(LogRedactor.scrub("unknown Command type 'Nope'")).isEqualTo("unknown Command type 'Nope'");
        assertThat(LogRedactor.scrub("x".repeat(1000))).hasSizeLessThan(420);
        assertThat(LogRedactor.scrub((String) null)).isNull();
    }

    @Test
    void aFailureHandedToTheLoggerKeepsItsClassesAndTraceButNotItsMessagesSecrets() {
        IllegalStateException cause = new IllegalStateException("bad value \"" + SECRET + "\"");
        IllegalArgumentException failure = new IllegalArgumentException("malformed \"" + SECRET + "\"", cause);
        Throwable safe = LogRedactor.safe(failure);
        StringWriter trace = new StringWriter();
        safe.printStackTrace(new PrintWriter(trace));
        assertThat(trace.toString()).doesNotContain(SECRET)
                .contains("java.lang.IllegalArgumentException: malformed \"<redacted>\"")
                .contains("Caused by: java.lang.IllegalStateException: bad value \"<redacted>\"")
                .contains("LogRedactorTest.aFailureHandedToTheLoggerKeepsItsClassesAndTraceButNotItsMessagesSecrets");
        assertThat(safe.getStackTrace()).isEqualTo(failure.getStackTrace());
    }
}

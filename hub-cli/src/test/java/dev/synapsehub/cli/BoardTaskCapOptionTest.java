package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code --board-task-cap} reaches the board's limits; a negative cap is refused at start. */
class BoardTaskCapOptionTest {
    private static ServeOptions parse(String... args) {
        SynapseHubCommand command = new SynapseHubCommand();
        new CommandLine(command).parseArgs(args);
        return command.serve;
    }

    @Test
    void theFlagSetsTheCapAndDefaultsToNone() {
        assertThat(parse("--board-task-cap", "25").newState().board().limits().taskCap()).isEqualTo(25);
        assertThat(parse().newState().board().limits().taskCap()).isZero();
        assertThatThrownBy(() -> parse("--board-task-cap", "-1").newState())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--board-task-cap");
    }
}

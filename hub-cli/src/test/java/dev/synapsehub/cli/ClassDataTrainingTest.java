package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** The class-data training run goes through start, claim, snapshot and restart, and cleans up after itself. */
class ClassDataTrainingTest {
    private static List<Path> scratchDirs() throws IOException {
        try (Stream<Path> s = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return s.filter(p -> p.getFileName().toString().startsWith("synapse-hub-cds")).toList();
        }
    }

    @Test
    void theTrainingRunsEveryStepOfARestartAndLeavesNoScratchFiles() throws Exception {
        List<Path> before = scratchDirs();
        // throws if /health does not answer 200, the claim is refused or the stop writes no snapshot
        ClassDataTraining.run();
        assertThat(scratchDirs()).containsExactlyInAnyOrderElementsOf(before);
    }
}

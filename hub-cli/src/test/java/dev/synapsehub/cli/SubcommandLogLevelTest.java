package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A subcommand logs at WARN unless told otherwise, also behind the options that may precede it. */
class SubcommandLogLevelTest {
    @Test
    void aSubcommandIsFoundBehindTheOptionsThatMayComeFirst() {
        assertThat(Main.namesASubcommand(new String[] {"journal", "inspect"})).isTrue();
        assertThat(Main.namesASubcommand(new String[] {"--config", "hub.properties", "journal", "inspect"})).isTrue();
        assertThat(Main.namesASubcommand(new String[] {"--config=hub.properties", "who"})).isTrue();
        assertThat(Main.namesASubcommand(new String[] {"--log-format", "json", "--config", "f", "state"})).isTrue();
        assertThat(Main.namesASubcommand(new String[] {"--port", "0"})).isFalse();
        assertThat(Main.namesASubcommand(new String[] {"--config", "hub.properties"})).isFalse();
        assertThat(Main.namesASubcommand(new String[] {"--config", "hub.properties", "--db", "hub.db"})).isFalse();
        assertThat(Main.namesASubcommand(new String[] {})).isFalse();
    }
}

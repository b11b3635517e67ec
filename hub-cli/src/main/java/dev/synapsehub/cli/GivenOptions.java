package dev.synapsehub.cli;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Where an option of the hub command got its value: the command line, the {@code --config}
 * file, or its own default. A start refuses what the command line asks for and cannot do, and
 * warns about the same in a file, which may be a copy of the shipped example serving other hubs.
 */
final class GivenOptions {
    /** Where an option's value came from. */
    enum Source { DEFAULT, COMMAND_LINE, CONFIG_FILE }

    private final CommandSpec command;

    /** {@code command} is the parsed hub command; null (options made in code) gives every option its default. */
    GivenOptions(CommandSpec command) {
        this.command = command;
    }

    /** Where {@code option} (its long name) got its value. */
    Source source(String option) {
        if (command == null) {
            return Source.DEFAULT;
        }
        CommandLine.ParseResult parsed = command.commandLine() == null ? null : command.commandLine().getParseResult();
        if (parsed != null && parsed.hasMatchedOption(option)) {
            return Source.COMMAND_LINE;
        }
        OptionSpec spec = command.findOption(option);
        CommandLine.IDefaultValueProvider file = command.defaultValueProvider();
        if (spec == null || file == null) {
            return Source.DEFAULT;
        }
        String value;
        try {
            value = file.defaultValue(spec);
        } catch (Exception e) { // the properties provider throws nothing; another provider is no file
            return Source.DEFAULT;
        }
        // a flag set to false in the file (the example's no-shutdown-snapshot=false) asks for nothing
        boolean unset = value == null || (spec.typeInfo().isBoolean() && value.strip().equalsIgnoreCase("false"));
        return unset ? Source.DEFAULT : Source.CONFIG_FILE;
    }
}

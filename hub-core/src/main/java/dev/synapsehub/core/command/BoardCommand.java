package dev.synapsehub.core.command;

/** A shared-board command: declare a task, update it, or post a progress note. */
public sealed interface BoardCommand extends Command
        permits LedgerTaskCommand, LedgerTaskUpdateCommand, LedgerProgressCommand {
}

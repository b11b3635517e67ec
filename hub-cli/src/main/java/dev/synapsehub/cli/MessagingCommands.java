package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/** Subcommands for messages and the shared board: send, tail, board, dead-letters. */
final class MessagingCommands {
    private MessagingCommands() {
    }

    /** {@code synapse-hub send TARGET MESSAGE}. */
    @Command(name = "send", mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER,
            description = {"Send a chat message: to \"all\", to an agent, a project/* group or a project/role.",
                "A directed message nobody live receives is kept as a dead letter for the recipient's mailbox."})
    static final class Send extends OperatorCommands.Base {
        @Parameters(index = "0", paramLabel = "TARGET", description = "all, a name, project/*, project/role, or a comma list.")
        String target;

        @Parameters(index = "1", paramLabel = "MESSAGE", description = "The message text.")
        String message;

        @Option(names = "--receipt", description = "Ask for a delivery receipt and report it.")
        boolean receipt;

        private final String clientMsgId = "cli-" + UUID.randomUUID();

        @Override
        ObjectNode request(HubClient hub) {
            ObjectNode f = hub.frame("chat");
            f.put("target", target);
            f.put("payload", message);
            f.put("client_msg_id", clientMsgId);
            if (receipt) {
                f.put("receipt_requested", true);
            }
            return f;
        }

        @Override
        Predicate<ObjectNode> isReply() {
            if (receipt) {
                return f -> (type(f).equals("delivery_receipt") && clientMsgId.equals(f.path("client_msg_id").asText())
                        && !f.path("deferred").asBoolean(false)) || type(f).equals("error");
            }
            return f -> (type(f).equals("chat") && clientMsgId.equals(f.path("client_msg_id").asText()))
                    || type(f).equals("error");
        }

        @Override
        int exitCode(ObjectNode reply) {
            // a receipt that says not delivered: the message reached nobody
            return type(reply).equals("delivery_receipt") && !reply.path("delivered").asBoolean()
                    ? ExitCodes.REFUSED : super.exitCode(reply);
        }

        @Override
        void report(ObjectNode reply, PrintWriter out) {
            if (type(reply).equals("error")) {
                denied(reply, out);
                return;
            }
            if (type(reply).equals("chat")) {
                out.printf("sent to %s (msg_id %s%s)%n", target, reply.path("msg_id").asText(),
                        reply.has("seq") ? ", seq " + reply.path("seq").asText() : "");
                return;
            }
            boolean delivered = reply.path("delivered").asBoolean();
            List<String> recipients = new ArrayList<>();
            reply.path("recipients").forEach(n -> recipients.add(n.asText()));
            out.printf("%s to %s: %s%s%n", delivered ? "delivered" : "not delivered", target,
                    recipients.isEmpty() ? "no live recipient" : String.join(", ", recipients),
                    reply.path("dead_lettered").asBoolean() ? " (kept as a dead letter for the mailbox)" : "");
        }
    }

    /** {@code synapse-hub board}. */
    @Command(name = "board", mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER,
            description = "Show the shared task board: tasks, what is ready, recent progress notes.")
    static final class Board extends OperatorCommands.Base {
        @Option(names = "--notes", defaultValue = "10", description = "Progress notes to show, newest last (default: ${DEFAULT-VALUE}).")
        int notes;

        @Override
        ObjectNode request(HubClient hub) {
            return hub.frame("board_request");
        }

        @Override
        Predicate<ObjectNode> isReply() {
            return f -> type(f).equals("board_snapshot");
        }

        @Override
        void report(ObjectNode reply, PrintWriter out) {
            JsonNode board = reply.path("board");
            JsonNode tasks = board.path("tasks");
            out.printf("%d task(s); ready: %s%n", tasks.size(), board.path("ready"));
            for (JsonNode t : tasks) {
                out.printf("  %-24s %-12s v%-4d %s%s%s%n", t.path("task_id").asText(), t.path("status").asText(),
                        t.path("version").asLong(), t.path("title").asText(),
                        t.path("depends_on").size() > 0 ? "  after " + t.path("depends_on") : "",
                        t.path("suggested_owner").asText().isEmpty() ? "" : "  → " + t.path("suggested_owner").asText());
            }
            JsonNode progress = board.path("progress");
            int from = Math.max(0, progress.size() - Math.max(0, notes));
            if (progress.size() > 0 && notes > 0) {
                out.println("progress:");
                for (int i = from; i < progress.size(); i++) {
                    JsonNode n = progress.get(i);
                    out.printf("  [%s] %s on %s: %s%n", n.path("kind").asText(), n.path("author").asText(),
                            n.path("task_id").asText().isEmpty() ? "(board)" : n.path("task_id").asText(),
                            n.path("text").asText());
                }
            }
        }
    }

    /** {@code synapse-hub dead-letters}. */
    @Command(name = "dead-letters", mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER,
            description = "Show directed messages that reached no live recipient, per target.")
    static final class DeadLetters extends OperatorCommands.StateQuery {

        @Override
        void report(ObjectNode reply, PrintWriter out) {
            JsonNode letters = reply.path("snapshot").path("dead_letters");
            double now = reply.path("snapshot").path("generated_at").asDouble();
            out.printf("%d target(s) with dead letters%n", letters.size());
            for (JsonNode d : letters) {
                out.printf(Locale.ROOT, "  %-28s %5d  last from %-20s %.0f s ago%n", d.path("target").asText(),
                        d.path("count").asLong(), d.path("last_sender").asText(), now - d.path("last_ts").asDouble());
            }
        }
    }

    /** {@code synapse-hub tail}: follow the live feed. */
    @Command(name = "tail", mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER,
            description = {"Follow the hub's live feed (chat, claims, board, presence) until Ctrl-C,",
                "--count frames or --duration seconds."})
    static final class Tail implements Callable<Integer> {
        @Mixin
        ClientOptions client;

        @Option(names = "--type", paramLabel = "TYPE", description = "Only frames of this type (repeatable), e.g. chat, claim_granted.")
        List<String> types = new ArrayList<>();

        @Option(names = "--sender", paramLabel = "AGENT", description = "Only frames from this sender (for chat) or about this agent/owner.")
        String sender;

        @Option(names = "--count", defaultValue = "0", description = "Stop after N matching frames (0: no limit).")
        long count;

        @Option(names = "--duration", paramLabel = "SECONDS", defaultValue = "0", description = "Stop after this long (0: no limit).")
        double duration;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            Set<String> wanted = Set.copyOf(types);
            CountDownLatch done = new CountDownLatch(1);
            AtomicLong printed = new AtomicLong();
            String usage = client.usageProblem();
            if (usage != null) {
                err.println("synapse-hub: " + usage);
                return ExitCodes.USAGE;
            }
            try (HubClient hub = client.connect()) {
                // an observer: every claim broadcast and presence even on a --default-delivery scoped hub
                ObjectNode everything = JsonNodeFactory.instance.objectNode().put("delivery", "broadcast");
                HubRefusal.register(hub, client, everything);
                hub.onFrame(f -> {
                    if (matches(f, wanted) && !"delivery_set".equals(f.path("type").asText())) {
                        synchronized (out) {
                            out.println(client.json ? FrameText.of(f) : line(f));
                            out.flush();
                        }
                        if (count > 0 && printed.incrementAndGet() >= count) {
                            done.countDown();
                        }
                    }
                });
                for (ObjectNode f : hub.pending()) {
                    if (matches(f, wanted) && !"welcome".equals(f.path("type").asText())
                            && !"delivery_set".equals(f.path("type").asText())) {
                        out.println(client.json ? FrameText.of(f) : line(f));
                    }
                }
                long waitMillis = duration > 0 ? (long) (duration * 1000) : Long.MAX_VALUE;
                while (hub.isOpen() && !done.await(Math.min(waitMillis, 200), TimeUnit.MILLISECONDS)) {
                    if (duration > 0) {
                        waitMillis -= 200;
                        if (waitMillis <= 0) {
                            break;
                        }
                    }
                }
                if (!hub.isOpen()) {
                    HubRefusal closed = HubRefusal.closed(hub, client);
                    err.println("synapse-hub: " + (closed != null ? closed.getMessage() : "the hub closed the connection"));
                    return closed != null ? closed.exitCode() : ExitCodes.UNAVAILABLE;
                }
                return ExitCodes.OK;
            } catch (HubRefusal e) {
                err.println("synapse-hub: " + e.getMessage());
                return e.exitCode();
            } catch (IOException e) {
                err.println("synapse-hub: cannot reach " + client.url + ": " + e.getMessage());
                return ExitCodes.UNAVAILABLE;
            } catch (TimeoutException e) {
                err.println("synapse-hub: no answer from " + client.url + " within " + client.timeoutSeconds + " s");
                return ExitCodes.UNAVAILABLE;
            }
        }

        private boolean matches(ObjectNode f, Set<String> wanted) {
            String type = f.path("type").asText();
            if (!wanted.isEmpty() && !wanted.contains(type)) {
                return false;
            }
            if (sender == null) {
                return true;
            }
            return sender.equals(f.path("sender").asText()) || sender.equals(f.path("owner").asText())
                    || sender.equals(f.path("agent").asText());
        }

        private static String line(ObjectNode f) {
            String type = f.path("type").asText();
            String ts = String.format(Locale.ROOT, "%.3f", f.path("timestamp").asDouble());
            return switch (type) {
                case "chat" -> ts + " chat " + f.path("sender").asText() + " -> " + f.path("target").asText("all") + ": "
                        + (f.path("payload").isTextual() ? f.path("payload").asText() : f.path("payload").toString());
                case "claim_granted", "release_granted", "handoff_granted", "task_updated" -> ts + " " + type + " "
                        + f.path("task_id").asText() + " owner " + f.path("owner").asText()
                        + (f.has("epoch") ? " epoch " + f.path("epoch").asText() : "");
                case "presence_update" -> ts + " presence " + f.path("event").asText() + " " + f.path("agent").asText();
                default -> ts + " " + type + " " + f.path("payload").asText();
            };
        }
    }
}

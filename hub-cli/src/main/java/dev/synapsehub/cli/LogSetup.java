package dev.synapsehub.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.spi.ContextAwareBase;
import org.slf4j.Logger;

/**
 * The daemon's default logging, {@code config/logback.xml} built in code: one line per event on
 * stderr, Netty and Ratis at WARN, the root at {@code SYNAPSE_LOG_LEVEL} (system property, then
 * environment; INFO when unset). Reading the XML file cost every start logback's XML machinery
 * and the JDK's SAX parser (about 470 classes) before {@code main} could log its first line.
 * Found by logback through {@code META-INF/services}; with {@code -Dlogback.configurationFile}
 * set it steps aside and logback reads that file as before. {@code LogSetupTest} holds it to the
 * XML file's output. With {@code SYNAPSE_LOG_FORMAT=json} ({@code --log-format json}) each event is
 * one JSON object per line instead, written by logback's own {@link JsonEncoder}.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_TOP_PRIORITY)
public final class LogSetup extends ContextAwareBase implements Configurator {
    /** The line format of {@code config/logback.xml}. */
    static final String PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{24} - %msg%n";
    /** What names the root level, as in {@code config/logback.xml}. */
    static final String LEVEL_VARIABLE = "SYNAPSE_LOG_LEVEL";
    /** What names the line format, {@code text} (the default) or {@code json}; set by {@code --log-format}. */
    static final String FORMAT_VARIABLE = "SYNAPSE_LOG_FORMAT";

    /** The format logging was started with: {@code json} when asked for (property or environment), else {@code text}. */
    static String activeFormat() {
        String format = System.getProperty(FORMAT_VARIABLE);
        if (format == null) {
            format = System.getenv(FORMAT_VARIABLE);
        }
        return "json".equalsIgnoreCase(format) ? "json" : "text";
    }

    /** Logback makes it through its service loader. */
    public LogSetup() {
    }

    /** False when an operator's {@code -Dlogback.configurationFile} configures logging instead (its levels are its own). */
    static boolean configuredInCode() {
        return System.getProperty("logback.configurationFile") == null;
    }

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        if (!configuredInCode()) {
            return ExecutionStatus.INVOKE_NEXT_IF_ANY; // the operator's file wins, read by logback as before
        }
        // an unknown format logs as text: the hub command then refuses it (exit 2), readably
        Encoder<ILoggingEvent> encoder = "json".equals(activeFormat()) ? json(context) : text(context);
        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setContext(context);
        stderr.setName("STDERR");
        stderr.setTarget("System.err");
        stderr.setEncoder(encoder);
        stderr.start();
        context.getLogger("io.netty").setLevel(Level.WARN);
        // Raft (mesh mode): its INFO lines narrate every election and log segment
        context.getLogger("org.apache.ratis").setLevel(Level.WARN);
        ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        String level = System.getProperty(LEVEL_VARIABLE);
        if (level == null) {
            level = System.getenv(LEVEL_VARIABLE);
        }
        // --log-level is checked by Main; an unknown name in the environment means INFO, said once
        // (logback's own Level.toLevel would take it as DEBUG)
        Level chosen = level == null ? Level.INFO : Level.toLevel(level.strip(), null);
        if (chosen == null) {
            System.err.println("synapse-hub: " + LEVEL_VARIABLE + " '" + level + "' is not a log level (ERROR, WARN,"
                    + " INFO, DEBUG, TRACE); logging at INFO");
            chosen = Level.INFO;
        }
        root.setLevel(chosen);
        root.addAppender(stderr);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }

    private static Encoder<ILoggingEvent> text(LoggerContext context) {
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern(PATTERN);
        encoder.start();
        return encoder;
    }

    /**
     * One object per line: timestamp (epoch ms), level, threadName, loggerName, message (the
     * template), formattedMessage, and throwable when there is one. The context, the arguments
     * and the sequence number are left out: they repeat or duplicate what the line already says.
     */
    private static Encoder<ILoggingEvent> json(LoggerContext context) {
        JsonEncoder encoder = new JsonEncoder();
        encoder.setContext(context);
        encoder.setWithContext(false);
        encoder.setWithArguments(false);
        encoder.setWithSequenceNumber(false);
        encoder.setWithNanoseconds(false);
        encoder.setWithFormattedMessage(true); // off by default: the template alone says too little
        encoder.start();
        return encoder;
    }
}

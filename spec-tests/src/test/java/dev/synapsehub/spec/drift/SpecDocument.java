package dev.synapsehub.spec.drift;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A plain-text parse of docs/coordination-spec.md: the invariant sections and the constants
 * table. No Markdown library: the document's conventions are simple and fixed.
 *
 * <ul>
 *   <li>An invariant is a {@code ### INV-XX-n — title} heading; its section runs to the next
 *       {@code ##}/{@code ###} heading.</li>
 *   <li>Inside it, paragraphs start with {@code **Normative.**}, {@code **Implementation.**},
 *       {@code **Pinned by.**}; symbols and files are in backticks (a Pinned-by file is a
 *       backticked token containing '/' or ending in .java); a {@code [model]} tag in the
 *       Pinned-by paragraph marks an id the model asserts; a line reading exactly
 *       {@code Status: not yet implemented} marks work for a later issue.</li>
 *   <li>Constants are the rows of the table under {@code ## Normative constants} whose first
 *       cell is a backticked name; the value is the first backticked token of the second cell.</li>
 * </ul>
 */
public final class SpecDocument {

    /** The exact status line of an invariant whose code comes in a later issue. */
    public static final String NOT_YET_IMPLEMENTED = "Status: not yet implemented";

    private static final Pattern HEADING = Pattern.compile("^### (INV-[A-Z]{2,3}-\\d+)\\b.*$");
    private static final Pattern BACKTICKED = Pattern.compile("`([^`]*)`");

    /** One documented invariant. */
    public record InvariantSection(String id, boolean normative, List<String> implementation,
                                   boolean pinnedByParagraph, List<String> pinnedFiles, boolean modelTag,
                                   boolean notYetImplemented) {
    }

    /** One constants row: the name and the raw backticked value. */
    public record ConstantRow(String name, String rawValue, int line) {
    }

    private final Map<String, List<InvariantSection>> invariants = new LinkedHashMap<>();
    private final List<ConstantRow> constants = new ArrayList<>();

    private SpecDocument() {
    }

    /** Parses the document text. */
    public static SpecDocument parse(String text) {
        SpecDocument doc = new SpecDocument();
        String[] lines = text.split("\r?\n", -1);
        boolean inConstants = false;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (line.startsWith("## ")) {
                inConstants = line.strip().equalsIgnoreCase("## Normative constants");
                continue;
            }
            Matcher h = HEADING.matcher(line.strip());
            if (h.matches()) {
                int end = i + 1;
                while (end < lines.length && !lines[end].startsWith("## ") && !lines[end].startsWith("### ")) {
                    end++;
                }
                InvariantSection section = section(h.group(1), lines, i + 1, end);
                doc.invariants.computeIfAbsent(section.id(), k -> new ArrayList<>()).add(section);
                continue;
            }
            if (inConstants && line.strip().startsWith("|")) {
                String[] cells = line.strip().split("\\|", -1);
                if (cells.length >= 3) {
                    Matcher name = BACKTICKED.matcher(cells[1]);
                    if (name.find() && cells[1].strip().equals("`" + name.group(1) + "`")) {
                        Matcher value = BACKTICKED.matcher(cells[2]);
                        doc.constants.add(new ConstantRow(name.group(1), value.find() ? value.group(1) : null, i + 1));
                    }
                }
            }
        }
        return doc;
    }

    private static InvariantSection section(String id, String[] lines, int from, int to) {
        boolean normative = false;
        boolean pinned = false;
        boolean model = false;
        boolean notYet = false;
        List<String> implementation = new ArrayList<>();
        List<String> files = new ArrayList<>();
        String paragraph = "";
        for (int i = from; i < to; i++) {
            String line = lines[i].strip();
            if (line.isEmpty()) {
                paragraph = "";
                continue;
            }
            if (line.equals(NOT_YET_IMPLEMENTED)) {
                notYet = true;
                paragraph = "";
                continue;
            }
            if (line.startsWith("**Normative.**")) {
                paragraph = "normative";
                normative = true;
            } else if (line.startsWith("**Implementation.**")) {
                paragraph = "implementation";
            } else if (line.startsWith("**Pinned by.**")) {
                paragraph = "pinned";
                pinned = true;
            } else if (line.startsWith("**")) {
                paragraph = "";
            }
            if (paragraph.equals("implementation")) {
                Matcher m = BACKTICKED.matcher(line);
                while (m.find()) {
                    implementation.add(m.group(1));
                }
            } else if (paragraph.equals("pinned")) {
                Matcher m = BACKTICKED.matcher(line);
                while (m.find()) {
                    if (m.group(1).contains("/") || m.group(1).endsWith(".java")) {
                        files.add(m.group(1));
                    }
                }
                if (line.contains("[model]")) {
                    model = true;
                }
            }
        }
        return new InvariantSection(id, normative, List.copyOf(implementation), pinned, List.copyOf(files), model,
                notYet);
    }

    /** Invariant sections by id, in document order (a list per id, to detect duplicates). */
    public Map<String, List<InvariantSection>> invariants() {
        return invariants;
    }

    /** Constants rows in document order. */
    public List<ConstantRow> constants() {
        return constants;
    }
}

package dev.synapsehub.core.scope;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** Pins the ScopeIndex conflict scan (INV-ME-2..4, catalog §12.5) against a brute-force scan. */
class ScopeIndexTest {

    private static ScopeIndex.Holding holding(String task, String owner, long order, String wt, String... paths) {
        return new ScopeIndex.Holding(task, owner, order, new Scope(wt, List.of(paths)));
    }

    private static Optional<ScopeIndex.Holding> bruteForce(List<ScopeIndex.Holding> held, Scope request, String actor,
                                                           ScopeIndex.Holding exclude) {
        ScopeIndex.Holding first = null;
        for (ScopeIndex.Holding h : held) {
            if (h.owner().equals(actor) || (exclude != null && h.taskId().equals(exclude.taskId()))) {
                continue;
            }
            if (h.scope().conflictsWith(request) && (first == null || h.order() < first.order())) {
                first = h;
            }
        }
        return Optional.ofNullable(first);
    }

    @Test
    void emptyIndexHasNoConflict() {
        assertThat(new ScopeIndex().firstConflict(new Scope("", List.of()), "A", null)).isEmpty();
    }

    @Test
    void firstConflictIsTheLowestOrder() {
        ScopeIndex index = new ScopeIndex();
        index.index(holding("SECOND", "CHARLIE", 2, "main", "src/lib"));
        index.index(holding("FIRST", "BRAVO", 1, "main", "src/app.py"));
        assertThat(index.firstConflict(new Scope("main", List.of("src")), "ALPHA", null))
                .map(ScopeIndex.Holding::taskId).contains("FIRST");
    }

    @Test
    void skipsTheActorAndTheExcludedTask() {
        ScopeIndex index = new ScopeIndex();
        ScopeIndex.Holding own = holding("OWN", "ALPHA", 1, "main", "src/app.py");
        ScopeIndex.Holding moving = holding("T1", "GIVER", 2, "main", "src");
        index.index(own);
        index.index(moving);
        index.index(holding("TREE", "BRAVO", 3, "feature"));
        index.index(holding("DISJOINT", "CHARLIE", 4, "main", "docs"));
        assertThat(index.firstConflict(moving.scope(), "ALPHA", moving)).isEmpty();
        assertThat(index.firstConflict(moving.scope(), "DELTA", moving)).map(ScopeIndex.Holding::taskId).contains("OWN");
        assertThat(index.firstConflict(new Scope("main", List.of()), "ALPHA", null))
                .map(ScopeIndex.Holding::taskId).contains("T1");
    }

    @Test
    void anExcludedHoldingInAnotherWorktreeHidesNoConflict() {
        ScopeIndex index = new ScopeIndex();
        ScopeIndex.Holding elsewhere = holding("T10", "D", 7, "feature");
        index.index(elsewhere);
        index.index(holding("T11", "D", 8, "main"));
        assertThat(index.firstConflict(new Scope("main", List.of()), "B", elsewhere))
                .map(ScopeIndex.Holding::taskId).contains("T11");
        assertThat(index.firstConflict(new Scope("main", List.of("x")), "B", elsewhere))
                .map(ScopeIndex.Holding::taskId).contains("T11");
    }

    @Test
    void wholeWorktreeEncodingsBothConflict() {
        for (List<String> whole : List.of(List.<String>of(), List.of(""))) {
            ScopeIndex index = new ScopeIndex();
            index.index(new ScopeIndex.Holding("TREE", "B", 1, new Scope("main", whole)));
            assertThat(index.firstConflict(new Scope("main", List.of("unrelated/file.py")), "A", null)).isPresent();
            assertThat(index.firstConflict(new Scope("main", List.of()), "A", null)).isPresent();
            assertThat(index.firstConflict(new Scope("main", List.of("")), "A", null)).isPresent();
            assertThat(index.firstConflict(new Scope("feature", List.of()), "A", null)).isEmpty();
        }
    }

    @Test
    void segmentBoundaryAndRemovalPrune() {
        ScopeIndex index = new ScopeIndex();
        ScopeIndex.Holding src = holding("T1", "A", 1, "wt", "src", "src/deep/x");
        ScopeIndex.Entry srcEntry = index.index(src);
        assertThat(index.firstConflict(new Scope("wt", List.of("srcfoo/x.py")), "B", null)).isEmpty();
        assertThat(index.firstConflict(new Scope("wt", List.of("src/deep")), "B", null)).isPresent();
        index.remove(srcEntry);
        assertThat(index.firstConflict(new Scope("wt", List.of()), "B", null)).isEmpty();
        assertThat(index.worktreeCount()).isZero();
    }

    @Test
    void randomisedCrossCheckAgainstBruteForce() {
        Random random = new Random(20240601L);
        String[] segments = {"src", "core", "tests", "a", "b", "c", "..", ".", ""};
        String[] worktrees = {"main", "wt-a", "", "feature"};
        String[] owners = {"A", "B", "C", "D"};
        ScopeIndex index = new ScopeIndex();
        List<ScopeIndex.Holding> held = new ArrayList<>();
        Map<ScopeIndex.Holding, ScopeIndex.Entry> entries = new IdentityHashMap<>();
        long order = 0;
        int conflictsSeen = 0;
        for (int step = 0; step < 20_000; step++) {
            int op = random.nextInt(10);
            if (op < 4 || held.isEmpty()) {
                Scope scope = randomScope(random, segments, worktrees);
                ScopeIndex.Holding h = new ScopeIndex.Holding("T" + step, owners[random.nextInt(owners.length)],
                        ++order, scope);
                entries.put(h, index.index(h));
                held.add(h);
            } else if (op < 7) {
                ScopeIndex.Holding victim = held.remove(random.nextInt(held.size()));
                index.remove(entries.remove(victim));
            } else {
                Scope request = randomScope(random, segments, worktrees);
                String actor = owners[random.nextInt(owners.length)];
                ScopeIndex.Holding exclude = random.nextBoolean() || held.isEmpty()
                        ? null : held.get(random.nextInt(held.size()));
                Optional<ScopeIndex.Holding> expected = bruteForce(held, request, actor, exclude);
                assertThat(index.firstConflict(request, actor, exclude))
                        .as("step %d request %s actor %s exclude %s", step, request, actor, exclude)
                        .isEqualTo(expected);
                if (expected.isPresent()) {
                    conflictsSeen++;
                }
            }
            if (held.size() > 60) {
                index.remove(entries.remove(held.remove(0)));
            }
        }
        for (ScopeIndex.Holding h : held) {
            index.remove(entries.remove(h));
        }
        assertThat(index.worktreeCount()).isZero();
        assertThat(conflictsSeen).isGreaterThan(100);
    }

    /**
     * One directory with thousands of children, 256 of them with the same {@code hashCode}
     * ("Aa" and "BB" blocks): the child table grows, probes long runs and closes holes on removal
     * (wrapping around its end) while every lookup still finds exactly what a brute-force scan does.
     */
    @Test
    void manySiblingsWithCollidingHashesAreFoundAddedAndRemovedLikeABruteForceScan() {
        List<String> names = new ArrayList<>();
        for (int bits = 0; bits < 256; bits++) {
            StringBuilder sb = new StringBuilder();
            for (int b = 0; b < 8; b++) {
                sb.append((bits >> b & 1) == 0 ? "Aa" : "BB");
            }
            names.add(sb.toString());
        }
        assertThat(names.stream().map(String::hashCode).distinct().count()).isOne();
        for (int i = 0; i < 1500; i++) {
            names.add("m" + i);
        }
        // names whose home is the table's last slot (the table spreads String.hashCode as HashMap
        // does and is a power of two long): their runs wrap around its end, where a removal's
        // hole can be before a later entry's home
        for (int i = 0, wrapping = 0; wrapping < 40; i++) {
            int h = ("w" + i).hashCode();
            if (((h ^ (h >>> 16)) & 4095) == 4095) {
                names.add("w" + i);
                wrapping++;
            }
        }
        Random random = new Random(20261203L);
        ScopeIndex index = new ScopeIndex();
        List<ScopeIndex.Holding> held = new ArrayList<>();
        Map<ScopeIndex.Holding, ScopeIndex.Entry> entries = new IdentityHashMap<>();
        long order = 0;
        int found = 0;
        int missed = 0;
        for (int step = 0; step < 30_000; step++) {
            String name = names.get(random.nextInt(names.size()));
            int op = random.nextInt(8);
            if (op < 4 && held.size() < 1200) {
                String path = random.nextInt(4) == 0 ? "d/" + name + "/x" : "d/" + name;
                ScopeIndex.Holding h = holding("T" + step, random.nextBoolean() ? "A" : "C", ++order, "wt", path);
                entries.put(h, index.index(h));
                held.add(h);
            } else if (op < 6 && !held.isEmpty()) {
                index.remove(entries.remove(held.remove(random.nextInt(held.size()))));
            } else {
                Scope request = new Scope("wt", List.of("d/" + name));
                Optional<ScopeIndex.Holding> expected = bruteForce(held, request, "B", null);
                assertThat(index.firstConflict(request, "B", null)).as("step %d %s", step, name).isEqualTo(expected);
                if (expected.isPresent()) {
                    found++;
                } else {
                    missed++;
                }
            }
        }
        assertThat(found).isGreaterThan(500);
        assertThat(missed).isGreaterThan(500);
        assertThat(index.firstConflict(new Scope("wt", List.of("d")), "B", null))
                .isEqualTo(bruteForce(held, new Scope("wt", List.of("d")), "B", null));
        for (ScopeIndex.Holding h : held) {
            index.remove(entries.remove(h));
        }
        assertThat(index.worktreeCount()).isZero();
    }

    @Test
    void handingOffAClaimWithAPathIdentityStillSeesTheGiversOtherClaimOnTheSamePaths() {
        ScopeIndex index = new ScopeIndex();
        ScopeIndex.Holding plain = holding("T2", "G", 1, "w", "a");
        PathIdentity identity = new PathIdentity("w", "", "", true, List.of(new PathIdentity.Row("a", "a", "", "")));
        ScopeIndex.Holding moving = new ScopeIndex.Holding("T1", "G", 2, new Scope("w", List.of("a"), identity));
        index.index(plain);
        index.index(moving);
        // the recipient R would hold T1 on "a" while G keeps T2 on "a" (INV-CR-2, INV-ME-2)
        assertThat(index.firstConflict(moving.scope(), "R", moving)).map(ScopeIndex.Holding::taskId).contains("T2");
        assertThat(index.firstConflict(moving.scope(), "G", moving)).as("the giver's own claims never block").isEmpty();
    }

    @Test
    void aCaseSensitiveIdentitySeesALegacyClaimOnTheSamePathsInAnotherNormalisationForm() {
        ScopeIndex index = new ScopeIndex();
        index.index(holding("L1", "X", 1, "\u00e9", "\u00e9")); // NFC
        PathIdentity identity = new PathIdentity("\u00e9", "", "", true,
                List.of(new PathIdentity.Row("\u00e9", "\u00e9", "", "")));
        Scope nfd = new Scope("e\u0301", List.of("e\u0301"), identity); // the same text in NFD (§7.7 aligns after NFC)
        assertThat(nfd.conflictsWith(index.firstConflict(nfd, "Y", null).map(ScopeIndex.Holding::scope)
                .orElseThrow())).isTrue();
        ScopeIndex reverse = new ScopeIndex();
        reverse.index(holding("L2", "X", 1, "e\u0301", "e\u0301")); // a legacy claim in NFD
        Scope nfc = new Scope("\u00e9", List.of("\u00e9"), identity);
        assertThat(reverse.firstConflict(nfc, "Y", null)).map(ScopeIndex.Holding::taskId).contains("L2");
    }

    /**
     * Holdings with and without a path identity (case-sensitive or not, display text in NFC or
     * NFD and in either case), requests of both kinds, and handoff-style exclusions: the index
     * finds exactly what a brute-force scan over {@link Scope#conflictsWith} finds.
     */
    @Test
    void withPathIdentitiesAndHandoffExclusionsTheIndexFindsWhatABruteForceScanFinds() {
        Random random = new Random(20261204L);
        String[] segments = {"src", "SRC", "a", "b", "\u00e9", "e\u0301", "\u00c9", "c"};
        String[] worktrees = {"main", "MAIN", "w\u00e9", "we\u0301", "feature"};
        String[] owners = {"A", "B", "C"};
        ScopeIndex index = new ScopeIndex();
        List<ScopeIndex.Holding> held = new ArrayList<>();
        Map<ScopeIndex.Holding, ScopeIndex.Entry> entries = new IdentityHashMap<>();
        long order = 0;
        int conflictsSeen = 0;
        for (int step = 0; step < 20_000; step++) {
            int op = random.nextInt(10);
            if (op < 4 || held.isEmpty()) {
                ScopeIndex.Holding h = new ScopeIndex.Holding("T" + step, owners[random.nextInt(owners.length)],
                        ++order, withRandomIdentity(random, randomScope(random, segments, worktrees)));
                entries.put(h, index.index(h));
                held.add(h);
            } else if (op < 6) {
                index.remove(entries.remove(held.remove(random.nextInt(held.size()))));
            } else {
                String actor = owners[random.nextInt(owners.length)];
                ScopeIndex.Holding exclude = null;
                Scope request;
                if (random.nextBoolean()) { // a handoff: the moved claim's own scope, itself excluded
                    exclude = held.get(random.nextInt(held.size()));
                    request = exclude.scope();
                } else {
                    request = withRandomIdentity(random, randomScope(random, segments, worktrees));
                }
                Optional<ScopeIndex.Holding> expected = bruteForce(held, request, actor, exclude);
                assertThat(index.firstConflict(request, actor, exclude))
                        .as("step %d request %s actor %s exclude %s", step, request, actor, exclude)
                        .isEqualTo(expected);
                if (expected.isPresent()) {
                    conflictsSeen++;
                }
            }
            if (held.size() > 40) {
                index.remove(entries.remove(held.remove(0)));
            }
        }
        assertThat(conflictsSeen).isGreaterThan(100);
    }

    @Test
    void removingAnEntryFromBeforeAClearLeavesTheNewIndexExact() {
        ScopeIndex index = new ScopeIndex();
        ScopeIndex.Entry old = index.index(holding("OLD", "X", 1, "w", "e\u0301")); // a path in NFD
        index.clear();
        index.index(holding("NEW", "X", 2, "w", "e\u0301"));
        index.remove(old); // detached: must not change what the live index knows of its NFD text
        PathIdentity identity = new PathIdentity("w", "", "", true, List.of(new PathIdentity.Row("\u00e9", "\u00e9", "", "")));
        assertThat(index.firstConflict(new Scope("w", List.of("\u00e9"), identity), "Y", null))
                .map(ScopeIndex.Holding::taskId).contains("NEW");
    }

    /** {@code scope} as it is, or with a path identity aligned with its display text (contract §7.7). */
    private static Scope withRandomIdentity(Random random, Scope scope) {
        if (random.nextInt(3) == 0) {
            return scope;
        }
        boolean caseSensitive = random.nextBoolean();
        List<PathIdentity.Row> rows = new ArrayList<>();
        String[] elsewhere = {"a", "b/c", "SRC/a", "\u00e9/x"};
        for (String path : scope.paths()) {
            // the file-system path is usually the display path; sometimes another one (a link)
            String fs = random.nextInt(4) == 0 ? elsewhere[random.nextInt(elsewhere.length)] : path;
            rows.add(new PathIdentity.Row(PathIdentity.fold(path, caseSensitive), PathIdentity.fold(fs, caseSensitive),
                    "", ""));
        }
        return new Scope(scope.worktree(), scope.paths(), new PathIdentity(PathIdentity.fold(scope.worktree(),
                caseSensitive), "", "", caseSensitive, rows));
    }

    private static Scope randomScope(Random random, String[] segments, String[] worktrees) {
        int n = random.nextInt(5);
        List<String> raw = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int depth = random.nextInt(5);
            StringBuilder sb = new StringBuilder();
            for (int d = 0; d < depth; d++) {
                if (d > 0) {
                    sb.append('/');
                }
                sb.append(segments[random.nextInt(segments.length)]);
            }
            raw.add(sb.toString());
        }
        return new Scope(worktrees[random.nextInt(worktrees.length)], PathNormalizer.normalizeDeclared(raw, 512));
    }
}

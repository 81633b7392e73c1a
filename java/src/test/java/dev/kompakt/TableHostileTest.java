package dev.kompakt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damaged, truncated and fuzzed table files (the fuzz corpus, KOMPAKT_FUZZ_CORPUS/table):
 * opening and reading them whole with every method of {@link KompaktTable} either succeeds or
 * throws one of kompakt's exceptions (or an {@link InvalidOptionException}); never another
 * exception, an Error or a crash. Nothing is leaked either: the allocator of each file is
 * closed (and checked empty) after it.
 */
class TableHostileTest {
    @TempDir
    Path tmp;

    /** Rows read at most per file (a hostile index may claim billions). */
    static final long MAX_ROWS = 200_000;

    /** A small table of every type, in groups of 16 rows. */
    static byte[] smallTable(Path dir) throws IOException {
        Path path = dir.resolve("small.kpk");
        try (BufferAllocator a = new RootAllocator();
                TableFixtures.EveryType data = TableFixtures.everyType(a, 40, 0)) {
            TableWriteOptions opts = TableWriteOptions.builder().rowsPerGroup(16).build();
            try (KompaktTableWriter w = KompaktTableWriter.create(path.toString(), data.root.getSchema(), opts,
                    data.dictionaries)) {
                w.write(data.root);
                w.finish();
            }
        }
        return Files.readAllBytes(path);
    }

    /**
     * Opens and reads {@code file} with every method; returns "OK" or the simple name of the
     * kompakt exception. Any other throwable fails the test.
     */
    static String readEverything(Path file) {
        try (BufferAllocator a = new RootAllocator()) {
            String outcome = attempt(() -> {
                try (KompaktTable t = KompaktTable.open(file.toString(), 2)) {
                    exercise(t, a);
                }
            });
            return outcome;
        } catch (IllegalStateException leak) {
            fail(file + ": memory leaked: " + leak.getMessage(), leak);
            return null;
        }
    }

    private static void exercise(KompaktTable t, BufferAllocator a) throws KompaktException {
        List<Field> fields = t.schema().getFields();
        t.metadata();
        t.sortKeys();
        t.columnSizes();
        try {
            t.portableSchema();
        } catch (InvalidOptionException e) {
            // A time column: fine.
        }
        // Portable reads of the columns that have a portable type (not times of day).
        int[] portable = java.util.stream.IntStream.range(0, fields.size())
                .filter(c -> fields.get(c).getType().getTypeID() != org.apache.arrow.vector.types.pojo.ArrowType.ArrowTypeID.Time)
                .toArray();
        long rows = Math.min(t.numRows(), MAX_ROWS);
        long step = Math.max(1, Math.min(65_536, t.rowsPerGroup()));
        List<Throwable> kompakt = new ArrayList<>();
        for (long start = 0; start < rows; start += step) {
            long from = start;
            long to = Math.min(rows, from + step);
            collect(kompakt, () -> t.read(a, null, from, to).close());
            collect(kompakt, () -> t.read(a, portable, from, to, true).close());
        }
        collect(kompakt, () -> t.take(a, null, new long[] {0, rows / 2, Math.max(0, rows - 1)}).close());
        for (int c = 0; c < fields.size(); c++) {
            int column = c;
            collect(kompakt, () -> t.statistics(column, a).ifPresent(VectorSchemaRoot::close));
            collect(kompakt, () -> t.read(a, new int[] {column}, 0, Math.min(rows, 100)).close());
            int width = TableArrow.fixedWidth(fields.get(c));
            if (width > 0 && rows > 0) {
                long n = Math.min(rows, 1000);
                collect(kompakt, () -> t.readInto(column, 0, n, ByteBuffer.allocateDirect((int) n * width),
                        ByteBuffer.allocateDirect((int) (n + 7) / 8)));
            }
            // A filter on every column that takes one (an integer, a string or a boolean).
            for (Object value : new Object[] {0L, "k", true}) {
                TableFilter f = TableFilter.of(fields.get(c).getName(), "!=", value);
                if (t.accepts(f)) {
                    collect(kompakt, () -> t.plan(0, rows, List.of(f)));
                    collect(kompakt, () -> t.readWhere(a, null, 0, rows, List.of(f), false).close());
                }
            }
        }
        if (!kompakt.isEmpty()) {
            Throwable first = kompakt.get(0);
            if (first instanceof KompaktException) {
                throw (KompaktException) first;
            }
            throw (InvalidOptionException) first;
        }
    }

    interface Step {
        void run() throws Exception;
    }

    /** Runs a step: kompakt's exceptions are collected, anything else fails at once. */
    private static void collect(List<Throwable> into, Step step) {
        try {
            step.run();
        } catch (KompaktException | InvalidOptionException e) {
            into.add(e);
        } catch (Throwable e) {
            fail("not a kompakt exception: " + e, e);
        }
    }

    private static String attempt(Step step) {
        try {
            step.run();
            return "OK";
        } catch (KompaktException | InvalidOptionException e) {
            assertTrue(e.getMessage() != null && !e.getMessage().isEmpty(), "a message");
            return e.getClass().getSimpleName();
        } catch (Throwable e) {
            fail("not a kompakt exception: " + e, e);
            return null;
        }
    }

    @Test
    void theSmallTableReadsCleanly() throws IOException {
        byte[] file = smallTable(tmp);
        Path path = Files.write(tmp.resolve("ok.kpk"), file);
        assertEquals("OK", readEverything(path));
    }

    @Test
    void everyTruncationIsRefused() throws IOException {
        byte[] file = smallTable(tmp);
        Path path = tmp.resolve("cut.kpk");
        Map<String, Integer> outcomes = new TreeMap<>();
        // Every length near the end (the footer and index), then every 7th byte before.
        for (int n = 0; n < file.length; n += n < file.length - 2048 ? 7 : 1) {
            Files.write(path, Arrays.copyOf(file, n));
            String outcome = readEverything(path);
            int len = n;
            assertTrue(!"OK".equals(outcome), () -> "a table cut to " + len + " of " + file.length + " bytes reads");
            outcomes.merge(outcome, 1, Integer::sum);
        }
        assertTrue(outcomes.containsKey("CorruptDataException"), outcomes.toString());
    }

    @Test
    void flippedBytesFailCleanly() throws IOException {
        byte[] file = smallTable(tmp);
        Path path = tmp.resolve("flipped.kpk");
        Random random = new Random(71);
        Map<String, Integer> outcomes = new TreeMap<>();
        for (int i = 0; i < file.length; i += 1 + random.nextInt(16)) {
            byte[] bad = file.clone();
            bad[i] ^= (byte) (1 << random.nextInt(8));
            Files.write(path, bad);
            outcomes.merge(readEverything(path), 1, Integer::sum);
        }
        // Checksums everywhere: a flipped bit reads as corrupt, never as other rows.
        assertEquals(List.of("CorruptDataException"), new ArrayList<>(outcomes.keySet()), outcomes.toString());
    }

    @Test
    void theFuzzCorpus() throws IOException {
        Path corpus = TestSupport.requiredPath("KOMPAKT_FUZZ_CORPUS", "/work/main/fuzz/corpus").resolve("table");
        List<Path> files;
        try (Stream<Path> s = Files.list(corpus)) {
            files = s.filter(Files::isRegularFile).sorted().collect(Collectors.toList());
        }
        assertTrue(files.size() >= 100, "corpus files: " + files.size());
        Map<String, Integer> outcomes = new TreeMap<>();
        Path path = tmp.resolve("corpus.kpk");
        for (Path f : files) {
            Files.copy(f, path, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            String outcome;
            try {
                outcome = readEverything(path);
            } catch (AssertionError e) {
                throw new AssertionError(f + ": " + e.getMessage(), e);
            }
            outcomes.merge(outcome, 1, Integer::sum);
        }
        System.out.println("table corpus: " + files.size() + " files: " + outcomes);
    }
}

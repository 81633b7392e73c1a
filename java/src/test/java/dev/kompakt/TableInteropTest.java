package dev.kompakt;

import static dev.kompakt.TableFixtures.assertRowsEqual;
import static dev.kompakt.TestSupport.runOk;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Table files shared with the other front ends: what Java writes, Python (KOMPAKT_PYTHON_BIN)
 * and the command line (KOMPAKT_BIN) read, and what Python writes, Java reads, value by value.
 * Python hands its values back as an Arrow IPC file (pyarrow's own format, read here by Arrow
 * Java), so that every type is compared exactly.
 */
class TableInteropTest {
    @TempDir
    Path dir;

    BufferAllocator allocator;

    @BeforeEach
    void allocator() {
        allocator = new RootAllocator();
    }

    @AfterEach
    void noLeak() {
        allocator.close();
    }

    /** Reads a table with kompakt.read_table and saves it as an Arrow IPC file; prints facts. */
    static final String PY_READ = "import kompakt, sys, pyarrow as pa\n"
            + "t = kompakt.read_table(sys.argv[1], to='arrow')\n"
            + "with pa.OSFile(sys.argv[2], 'wb') as f:\n"
            + "    with pa.ipc.new_file(f, t.schema) as w:\n"
            + "        w.write_table(t)\n"
            + "tf = kompakt.TableFile(sys.argv[1])\n"
            + "print(t.num_rows, tf.rows_per_group, sorted(tf.metadata.items()), tf.sorted_by)\n";

    /** Writes a table of many types with kompakt.write_table, and the same rows as an Arrow IPC file. */
    static final String PY_WRITE = "import kompakt, sys, datetime, decimal, pyarrow as pa\n"
            + "n = 1000\n"
            + "def nulls(k, v): return [None if (i + k) % 9 == 0 else v(i) for i in range(n)]\n"
            + "cols = {\n"
            + " 'id': pa.array(range(n), pa.int64()),\n"
            + " 'b': pa.array(nulls(1, lambda i: i % 2 == 0), pa.bool_()),\n"
            + " 'i8': pa.array(nulls(2, lambda i: i % 200 - 100), pa.int8()),\n"
            + " 'i32': pa.array(nulls(3, lambda i: i * 7919 - 3_000_000), pa.int32()),\n"
            + " 'u16': pa.array(nulls(4, lambda i: 60_000 + i % 5000), pa.uint16()),\n"
            + " 'u64': pa.array(nulls(5, lambda i: 2**64 - 1 - i), pa.uint64()),\n"
            + " 'f32': pa.array(nulls(6, lambda i: i / 4), pa.float32()),\n"
            + " 'f64': pa.array(nulls(7, lambda i: i * 1.1), pa.float64()),\n"
            + " 'dec': pa.array(nulls(8, lambda i: decimal.Decimal(i * 1001) / 100), pa.decimal128(12, 2)),\n"
            + " 'd': pa.array(nulls(0, lambda i: datetime.date(2020, 1, 1) + datetime.timedelta(days=i)), pa.date32()),\n"
            + " 'ts': pa.array(nulls(1, lambda i: 1_600_000_000_000_000 + i * 1_000_003), pa.timestamp('us')),\n"
            + " 'tsz': pa.array(nulls(2, lambda i: 1_600_000_000_000 + i), pa.timestamp('ms', tz='UTC')),\n"
            + " 'tns': pa.array(nulls(3, lambda i: 1_600_000_000_000_000_000 + i * 7), pa.timestamp('ns', tz='Asia/Tokyo')),\n"
            + " 'dur': pa.array(nulls(4, lambda i: i * 1000), pa.duration('ms')),\n"
            + " 's': pa.array(nulls(5, lambda i: 'text %d ü' % i), pa.string()),\n"
            + " 'ls': pa.array(nulls(6, lambda i: 'large %d' % (i * 3)), pa.large_string()),\n"
            + " 'bin': pa.array(nulls(7, lambda i: bytes([i % 256]) * (i % 5)), pa.binary()),\n"
            + " 'fb': pa.array(nulls(8, lambda i: i.to_bytes(3, 'little')), pa.binary(3)),\n"
            + " 'cat': pa.array(nulls(0, lambda i: ['x', 'y', 'z'][i % 3])).dictionary_encode(),\n"
            + " 'lst': pa.array(nulls(1, lambda i: list(range(i % 4)))),\n"
            + " 'st': pa.array(nulls(2, lambda i: {'p': i, 'q': str(i)})),\n"
            + "}\n"
            + "t = pa.table(cols)\n"
            + "kompakt.write_table(t, sys.argv[1], rows_per_group=128, sorted_by=['id'],"
            + " metadata={'from': 'python'})\n"
            + "with pa.OSFile(sys.argv[2], 'wb') as f:\n"
            + "    with pa.ipc.new_file(f, t.schema) as w:\n"
            + "        w.write_table(t)\n";

    @Test
    void javaWritesPythonAndTheCommandLineRead() throws Exception {
        Path python = TestSupport.pythonBin();
        Path bin = TestSupport.kompaktBin();
        Path table = dir.resolve("java.kpk");
        int rows = 500;
        try (TableFixtures.EveryType data = TableFixtures.everyType(allocator, rows, 0)) {
            TableWriteOptions opts = TableWriteOptions.builder().rowsPerGroup(100).codec("zstd").level(3)
                    .metadata(Map.of("from", "java")).build();
            try (KompaktTableWriter w = KompaktTableWriter.create(table.toString(), data.root.getSchema(), opts,
                    data.dictionaries)) {
                w.write(data.root);
                w.finish();
            }
            Path ipc = dir.resolve("java.arrow");
            TestSupport.Run r = runOk(List.of(python.toString(), "-c", PY_READ, table.toString(), ipc.toString()));
            assertTrue(r.stdout.startsWith(rows + " 100 [('from', 'java')]"), r.stdout);
            int seen = compareWithIpc(ipc, data.root, data.dictionaries);
            assertEquals(rows, seen);

            runOk(List.of(bin.toString(), "-q", "verify", table.toString()));
            TestSupport.Run head = runOk(List.of(bin.toString(), "-q", "head", table.toString(), "-n", "3",
                    "--columns", "int32,utf8,dict"));
            assertTrue(head.stdout.contains("row 1 é") && head.stdout.contains("green"), head.stdout);
            // Row 10 is the only one whose int16 is 10 * 37 - 20000.
            TestSupport.Run where = runOk(List.of(bin.toString(), "-q", "head", table.toString(), "--columns",
                    "int16,utf8", "--where", "int16==" + (10 * 37 - 20_000)));
            assertTrue(where.stdout.contains("row 10 é") && !where.stdout.contains("row 11 é"), where.stdout);
            TestSupport.Run take = runOk(List.of(bin.toString(), "-q", "head", table.toString(), "--columns",
                    "large_utf8", "--take", "499,4"));
            assertTrue(take.stdout.contains("large " + 499 * 7) && take.stdout.contains("large 28"), take.stdout);
        }
    }

    /** Compares the IPC file's rows with {@code expected}, value by value; returns the rows seen. */
    private int compareWithIpc(Path ipc, VectorSchemaRoot expected, DictionaryProvider expectedDicts)
            throws IOException {
        int seen = 0;
        try (ArrowFileReader reader = new ArrowFileReader(Files.newByteChannel(ipc), allocator)) {
            VectorSchemaRoot got = reader.getVectorSchemaRoot();
            List<String> names = new ArrayList<>();
            for (Field f : got.getSchema().getFields()) {
                names.add(f.getName());
            }
            List<String> want = new ArrayList<>();
            for (Field f : expected.getSchema().getFields()) {
                want.add(f.getName());
            }
            assertEquals(want, names);
            while (reader.loadNextBatch()) {
                for (FieldVector v : got.getFieldVectors()) {
                    Field e = expected.getSchema().findField(v.getName());
                    assertEquals(e.getType(), v.getField().getType(), v.getName());
                }
                assertRowsEqual(expected, expectedDicts, seen, got, reader);
                seen += got.getRowCount();
            }
        }
        return seen;
    }

    @Test
    void pythonWritesJavaReads() throws Exception {
        Path python = TestSupport.pythonBin();
        Path table = dir.resolve("py.kpk");
        Path ipc = dir.resolve("py.arrow");
        runOk(List.of(python.toString(), "-c", PY_WRITE, table.toString(), ipc.toString()));
        try (KompaktTable t = KompaktTable.open(table);
                ArrowFileReader reader = new ArrowFileReader(Files.newByteChannel(ipc), allocator)) {
            assertEquals(1000, t.numRows());
            assertEquals(128, t.rowsPerGroup());
            assertEquals(List.of(SortKey.ascending("id")), t.sortKeys());
            assertEquals("python", t.metadata().get("from"));
            VectorSchemaRoot expected = reader.getVectorSchemaRoot();
            int from = 0;
            while (reader.loadNextBatch()) {
                int n = expected.getRowCount();
                try (VectorSchemaRoot got = t.read(allocator, null, from, from + n)) {
                    for (Field f : expected.getSchema().getFields()) {
                        assertEquals(f.getType(), got.getSchema().findField(f.getName()).getType(), f.getName());
                    }
                    assertRowsEqual(expected, reader, from, got, (DictionaryProvider) got);
                }
                // The same rows, filtered in Java, as the sort key finds them.
                try (FilteredRead fr = t.readWhere(allocator, null, 0, t.numRows(),
                        List.of(TableFilter.of("id", ">=", 900L), TableFilter.of("cat", "in", "y")), false)) {
                    assertEquals(33, fr.rows().getRowCount());
                    assertTrue(fr.groupsRead() < fr.groupsTotal(), fr.toString());
                }
                from += n;
            }
            assertEquals(1000, from);
            // Portable reads: the uint64 column as decimal(20, 0), dictionary decoded.
            try (VectorSchemaRoot p = t.readPortable(allocator, new int[] {t.columnIndex("u64"),
                t.columnIndex("cat")}, 0, 3)) {
                assertEquals(new java.math.BigDecimal(new java.math.BigInteger("18446744073709551614")),
                        p.getVector("u64").getObject(1));
                assertEquals("y", p.getVector("cat").getObject(1).toString());
            }
        }
    }
}

package dev.kompakt;

import static dev.kompakt.TableFixtures.assertRowsEqual;
import static dev.kompakt.TableFixtures.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * KompaktTable and KompaktTableWriter: every type round trip, portable reads, ranges, take,
 * readInto, append, options, sort keys, metadata, statistics, plan and filtered reads.
 */
class TableTest {
    @TempDir
    Path dir;

    BufferAllocator allocator;

    @BeforeEach
    void allocator() {
        allocator = new RootAllocator();
    }

    /** Every test frees what it allocated: a leak fails here. */
    @AfterEach
    void noLeak() {
        allocator.close();
    }

    static final int ROWS = 300;

    /** The every-type table, written in batches of 100 rows, 64 rows per group. */
    Path writeEveryType(TableFixtures.EveryType data, TableWriteOptions options) throws IOException {
        Path path = dir.resolve("every.kpk");
        try (KompaktTableWriter w = KompaktTableWriter.create(path.toString(), data.root.getSchema(), options,
                data.dictionaries)) {
            for (int from = 0; from < ROWS; from += 100) {
                try (VectorSchemaRoot part = data.root.slice(from, 100)) {
                    w.write(part, data.dictionaries);
                }
                assertEquals(from + 100, w.rowsWritten());
            }
            assertEquals(ROWS, w.finish());
        }
        return path;
    }

    @Test
    void everyTypeRoundTrips() throws IOException {
        try (TableFixtures.EveryType data = TableFixtures.everyType(allocator, ROWS, 0)) {
            Path path = writeEveryType(data, TableWriteOptions.builder().rowsPerGroup(64).build());
            try (KompaktTable t = KompaktTable.open(path)) {
                assertEquals(ROWS, t.numRows());
                assertEquals(64, t.rowsPerGroup());
                assertEquals(5, t.numRowGroups());
                assertEquals(Files.size(path), t.fileSize());
                assertEquals(path.toString(), t.path());
                List<Field> fields = t.schema().getFields();
                assertEquals(data.root.getSchema().getFields().size(), fields.size());
                for (Field f : data.root.getSchema().getFields()) {
                    Field got = fields.get(t.columnIndex(f.getName()));
                    assertEquals(f.getType(), got.getType(), f.getName());
                }
                assertTrue(t.schema().findField("dict").getDictionary() != null, "dict stays a dictionary");
                try (VectorSchemaRoot all = t.read(allocator, null, 0, ROWS)) {
                    assertEquals(ROWS, all.getRowCount());
                    assertTrue(all instanceof TableBatch);
                    assertRowsEqual(data.root, data.dictionaries, 0, all, (DictionaryProvider) all);
                    FieldVector dict = all.getVector("dict");
                    assertTrue(dict.getField().getDictionary() != null);
                    assertEquals(1, ((TableBatch) all).getDictionaryIds().size());
                }
                // Ranges across row groups, a subset of columns in another order, an empty range.
                int[] cols = {t.columnIndex("utf8"), t.columnIndex("int64"), t.columnIndex("dict"),
                    t.columnIndex("struct"), t.columnIndex("list"), t.columnIndex("ts_ns")};
                for (long[] r : new long[][] {{0, 1}, {63, 65}, {100, 299}, {299, 300}, {150, 150}}) {
                    try (VectorSchemaRoot part = t.read(allocator, cols, r[0], r[1])) {
                        assertEquals(r[1] - r[0], part.getRowCount());
                        assertEquals(List.of("utf8", "int64", "dict", "struct", "list", "ts_ns"),
                                part.getSchema().getFields().stream().map(Field::getName).collect(Collectors.toList()));
                        assertRowsEqual(data.root, data.dictionaries, (int) r[0], part, (DictionaryProvider) part);
                    }
                }
            }
        }
    }

    @Test
    void portableReadsConvertAndRefuseTimes() throws IOException {
        try (TableFixtures.EveryType data = TableFixtures.everyType(allocator, ROWS, 5)) {
            Path path = writeEveryType(data, TableWriteOptions.defaults());
            try (KompaktTable t = KompaktTable.open(path)) {
                // Times of day have no portable type: refused, naming the column.
                InvalidOptionException e = assertThrows(InvalidOptionException.class, t::portableSchema);
                assertTrue(e.getMessage().contains("time32_s"), e.getMessage());
                InvalidOptionException e2 = assertThrows(InvalidOptionException.class,
                        () -> t.readPortable(allocator, new int[] {t.columnIndex("time64_ns")}, 0, 10));
                assertTrue(e2.getMessage().contains("time64_ns"), e2.getMessage());

                int[] cols = t.schema().getFields().stream().map(Field::getName)
                        .filter(n -> !TableFixtures.TIME_COLUMNS.contains(n)).mapToInt(t::columnIndex).toArray();
                try (VectorSchemaRoot p = t.readPortable(allocator, cols, 0, ROWS)) {
                    assertEquals(ROWS, p.getRowCount());
                    assertTrue(p.getFieldVectors().stream().allMatch(v -> v.getField().getDictionary() == null),
                            "no dictionary in a portable read");
                    assertTrue(p.getVector("dict") instanceof VarCharVector, "dictionary decoded");
                    assertTrue(p.getVector("uint8") instanceof SmallIntVector, "uint8 widened to int16");
                    assertTrue(p.getVector("uint16") instanceof IntVector, "uint16 widened to int32");
                    assertTrue(p.getVector("uint32") instanceof BigIntVector, "uint32 widened to int64");
                    assertEquals(new ArrowType.Decimal(20, 0, 128), p.getVector("uint64").getField().getType());
                    assertTrue(p.getVector("float16") instanceof Float4Vector, "float16 to float32");
                    assertTrue(p.getVector("date64") instanceof DateDayVector, "date64 to date32");
                    assertTrue(p.getVector("fixed_binary") instanceof VarBinaryVector, "fixed-size binary to binary");
                    for (String ts : List.of("ts_s", "ts_ms", "ts_us", "ts_ns", "tstz_s", "tstz_ms", "tstz_us",
                            "tstz_ns")) {
                        ArrowType.Timestamp type = (ArrowType.Timestamp) p.getVector(ts).getField().getType();
                        assertEquals(TimeUnit.MICROSECOND, type.getUnit(), ts);
                        ArrowType.Timestamp stored = (ArrowType.Timestamp) t.schema().findField(ts).getType();
                        assertEquals(stored.getTimezone(), type.getTimezone(), ts + " keeps its zone");
                    }
                    for (String d : List.of("dur_s", "dur_ms", "dur_us", "dur_ns")) {
                        assertEquals(new ArrowType.Duration(TimeUnit.MICROSECOND), p.getVector(d).getField().getType());
                    }
                    assertEquals(p.getSchema(), schemaOf(t, cols, true));
                    long[] perSecond = {1, 1_000, 1_000_000, 1_000_000_000};
                    for (int r = 0; r < ROWS; r++) {
                        int row = r;
                        assertEquals(TableFixtures.decoded(data.root.getVector("dict"), data.dictionaries, r),
                                value(p.getVector("dict"), r));
                        for (String u : List.of("uint8", "uint16", "uint32")) {
                            Object want = value(data.root.getVector(u), r);
                            Object got = value(p.getVector(u), r);
                            assertEquals(want == null ? null : ((Number) want).longValue(),
                                    got == null ? null : ((Number) got).longValue(), () -> u + " row " + row);
                        }
                        Object u64 = value(data.root.getVector("uint64"), r);
                        Object p64 = value(p.getVector("uint64"), r);
                        assertEquals(u64 == null ? null : new BigDecimal((BigInteger) u64), p64, "uint64 row " + r);
                        assertEquals(value(data.root.getVector("float16"), r), value(p.getVector("float16"), r));
                        Object d64 = data.root.getVector("date64").getObject(r);
                        assertEquals(d64 == null ? null : (int) (((LocalDateTime) d64).toLocalDate().toEpochDay()),
                                p.getVector("date64").getObject(r));
                        assertEquals(value(data.root.getVector("fixed_binary"), r), value(p.getVector("fixed_binary"), r));
                        String[] stamps = {"ts_s", "ts_ms", "ts_us", "ts_ns", "tstz_s", "tstz_ms", "tstz_us", "tstz_ns"};
                        for (int k = 0; k < stamps.length; k++) {
                            Object raw = value(data.root.getVector(stamps[k]), r);
                            long unit = perSecond[k % 4];
                            Object micros = raw == null ? null
                                    : unit <= 1_000_000 ? (Long) raw * (1_000_000 / unit) : (Long) raw / 1000;
                            assertEquals(micros, value(p.getVector(stamps[k]), r), stamps[k] + " row " + r);
                        }
                        // The unconverted columns are as stored.
                        for (String same : List.of("int64", "utf8", "large_utf8", "binary", "decimal", "list",
                                "struct", "bool", "float64")) {
                            assertEquals(value(data.root.getVector(same), r), value(p.getVector(same), r),
                                    same + " row " + r);
                        }
                    }
                }
            }
        }
    }

    private org.apache.arrow.vector.types.pojo.Schema schemaOf(KompaktTable t, int[] cols, boolean portable)
            throws IOException {
        try (VectorSchemaRoot empty = t.read(allocator, cols, 0, 0, portable)) {
            return empty.getSchema();
        }
    }

    @Test
    void takeReturnsRowsInTheirOrder() throws IOException {
        try (TableFixtures.EveryType data = TableFixtures.everyType(allocator, ROWS, 11)) {
            Path path = writeEveryType(data, TableWriteOptions.builder().rowsPerGroup(50).build());
            long[] rows = {299, 0, 17, 17, 150, 64, 3};
            try (KompaktTable t = KompaktTable.open(path.toString(), 2);
                    VectorSchemaRoot taken = t.take(allocator, null, rows)) {
                assertEquals(rows.length, taken.getRowCount());
                for (int k = 0; k < rows.length; k++) {
                    try (VectorSchemaRoot one = t.read(allocator, null, rows[k], rows[k] + 1)) {
                        for (FieldVector v : one.getFieldVectors()) {
                            FieldVector got = taken.getVector(v.getName());
                            Object want = v.getField().getDictionary() != null
                                    ? TableFixtures.decoded(v, (DictionaryProvider) one, 0) : value(v, 0);
                            Object have = got.getField().getDictionary() != null
                                    ? TableFixtures.decoded(got, (DictionaryProvider) taken, k) : value(got, k);
                            assertEquals(want, have, v.getName() + " of row " + rows[k]);
                        }
                    }
                }
                assertThrows(InvalidOptionException.class, () -> t.take(allocator, null, new long[] {ROWS}).close());
            }
        }
    }

    @Test
    void readIntoDirectBuffersAndAddresses() throws IOException {
        try (TableFixtures.EveryType data = TableFixtures.everyType(allocator, ROWS, 3)) {
            Path path = writeEveryType(data, TableWriteOptions.builder().rowsPerGroup(64).build());
            try (KompaktTable t = KompaktTable.open(path)) {
                for (String name : List.of("int64", "int32", "int16", "int8", "float64", "float32", "date32",
                        "ts_ns", "tstz_ms", "dur_us", "uint32")) {
                    int c = t.columnIndex(name);
                    int width = TableArrow.fixedWidth(t.schema().getFields().get(c));
                    long from = 30;
                    long to = 270;
                    int n = (int) (to - from);
                    ByteBuffer dst = ByteBuffer.allocateDirect(n * width).order(ByteOrder.nativeOrder());
                    ByteBuffer validity = ByteBuffer.allocateDirect((n + 7) / 8);
                    boolean anyNull = t.readInto(c, from, to, dst, validity);
                    assertTrue(anyNull, name + " has nulls");
                    assertEquals(0, dst.position(), "positions do not move");
                    try (ArrowBuf values = allocator.buffer((long) n * width); ArrowBuf nulls = allocator.buffer(n)) {
                        long nullCount = t.readIntoAddress(c, from, to, values.memoryAddress(), (long) n * width,
                                nulls.memoryAddress());
                        long expectNulls = 0;
                        FieldVector v = data.root.getVector(name);
                        for (int r = 0; r < n; r++) {
                            boolean isNull = v.isNull((int) from + r);
                            expectNulls += isNull ? 1 : 0;
                            boolean valid = (validity.get(r / 8) >> (r % 8) & 1) == 1;
                            assertEquals(!isNull, valid, name + " validity of row " + (from + r));
                            assertEquals(isNull ? 1 : 0, nulls.getByte(r), name + " null byte of row " + (from + r));
                            if (!isNull) {
                                long want = rawBits(v, (int) from + r, width);
                                assertEquals(want, read(dst, r * width, width), name + " row " + (from + r));
                                assertEquals(want, readBuf(values, r * width, width), name + " (address) row " + (from + r));
                            }
                        }
                        assertEquals(expectNulls, nullCount, name);
                    }
                }
                // Without validity; and a column with no nulls in the range reports none.
                ByteBuffer one = ByteBuffer.allocateDirect(8);
                assertFalse(t.readInto(t.columnIndex("int64"), 1, 2, one, null));
                // Booleans: a byte per row, 0 or 1.
                ByteBuffer flags = ByteBuffer.allocateDirect(10);
                ByteBuffer flagBits = ByteBuffer.allocateDirect(2);
                t.readInto(t.columnIndex("bool"), 0, 10, flags, flagBits);
                try (BufferAllocator a = new RootAllocator();
                        VectorSchemaRoot want = t.read(a, new int[] {t.columnIndex("bool")}, 0, 10)) {
                    org.apache.arrow.vector.BitVector b = (org.apache.arrow.vector.BitVector) want.getVector(0);
                    for (int r = 0; r < 10; r++) {
                        boolean valid = (flagBits.get(r / 8) >> (r % 8) & 1) == 1;
                        assertEquals(!b.isNull(r), valid, "bool validity of row " + r);
                        if (valid) {
                            assertEquals(b.get(r), flags.get(r), "bool of row " + r);
                        }
                    }
                }
                // Refused: a dictionary, a heap buffer, a buffer too small.
                ByteBuffer big = ByteBuffer.allocateDirect(1 << 16);
                assertThrows(InvalidOptionException.class, () -> t.readInto(t.columnIndex("dict"), 0, 10, big, null));
                assertThrows(InvalidOptionException.class,
                        () -> t.readInto(t.columnIndex("int64"), 0, 10, ByteBuffer.allocate(80), null));
                assertThrows(InvalidOptionException.class,
                        () -> t.readInto(t.columnIndex("int64"), 0, 10, ByteBuffer.allocateDirect(79), null));
                assertThrows(InvalidOptionException.class,
                        () -> t.readIntoAddress(t.columnIndex("int64"), 0, 10, 0, 80, 0));
            }
        }
    }

    /** The little-endian bits of row {@code r} as {@code width} bytes, widened to a long. */
    private static long rawBits(FieldVector v, int r, int width) {
        ArrowBuf b = v.getDataBuffer();
        return readBuf(b, (long) r * width, width);
    }

    private static long readBuf(ArrowBuf b, long at, int width) {
        switch (width) {
            case 1:
                return b.getByte(at);
            case 2:
                return b.getShort(at);
            case 4:
                return b.getInt(at);
            default:
                return b.getLong(at);
        }
    }

    private static long read(ByteBuffer b, int at, int width) {
        switch (width) {
            case 1:
                return b.get(at);
            case 2:
                return b.getShort(at);
            case 4:
                return b.getInt(at);
            default:
                return b.getLong(at);
        }
    }

    @Test
    void appendAddsRows() throws IOException {
        try (TableFixtures.EveryType first = TableFixtures.everyType(allocator, ROWS, 0);
                TableFixtures.EveryType more = TableFixtures.everyType(allocator, 120, ROWS)) {
            Path path = writeEveryType(first, TableWriteOptions.builder().rowsPerGroup(64).build());
            // The same dictionary as the table's.
            assertEquals(120, KompaktTableWriter.append(path.toString(), more.root, null, more.dictionaries));
            try (KompaktTable t = KompaktTable.open(path)) {
                assertEquals(ROWS + 120, t.numRows());
                try (VectorSchemaRoot head = t.read(allocator, null, 0, ROWS);
                        VectorSchemaRoot tail = t.read(allocator, null, ROWS, ROWS + 120)) {
                    assertRowsEqual(first.root, first.dictionaries, 0, head, (DictionaryProvider) head);
                    assertRowsEqual(more.root, more.dictionaries, 0, tail, (DictionaryProvider) tail);
                }
            }
        }
    }

    @Test
    void sortKeysMetadataAndColumnSizes() throws IOException {
        Path path = dir.resolve("sorted.kpk");
        TableWriteOptions opts = TableWriteOptions.builder()
                .codec("zstd").level(3)
                .rowsPerGroup(1000)
                .sortedBy(SortKey.ascending("t"), new SortKey("x", true, true))
                .metadata(Map.of("source", "TableTest", "rows", "5000"))
                .build();
        assertEquals(2, opts.sortedBy().size());
        try (VectorSchemaRoot root = sortedTwoKeys(5000);
                KompaktTableWriter w = KompaktTableWriter.create(path.toString(), root.getSchema(), opts)) {
            w.write(root);
            w.finish();
        }
        try (KompaktTable t = KompaktTable.open(path)) {
            assertEquals(List.of(SortKey.ascending("t"), new SortKey("x", true, true)), t.sortKeys());
            assertEquals(Map.of("source", "TableTest", "rows", "5000"), t.metadata());
            List<ColumnSize> sizes = t.columnSizes();
            assertEquals(List.of("t", "x", "s"), sizes.stream().map(ColumnSize::column).collect(Collectors.toList()));
            for (ColumnSize s : sizes) {
                assertTrue(s.storedBytes() > 0 && s.decodedBytes() > 0, s.toString());
            }
            assertTrue(sizes.stream().mapToLong(ColumnSize::storedBytes).sum() < t.fileSize());
        }
    }

    /** t = i / 2 ascending, then x descending with nulls first within equal t. */
    private VectorSchemaRoot sortedTwoKeys(int n) {
        BigIntVector t = new BigIntVector("t", allocator);
        IntVector x = new IntVector("x", allocator);
        VarCharVector s = new VarCharVector("s", allocator);
        t.allocateNew(n);
        x.allocateNew(n);
        s.allocateNew();
        for (int i = 0; i < n; i++) {
            t.set(i, i / 2);
            if (i % 2 == 1) {
                x.set(i, 1000 - i);
            } else {
                x.setNull(i);
            }
            s.setSafe(i, ("v" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        t.setValueCount(n);
        x.setValueCount(n);
        s.setValueCount(n);
        return new VectorSchemaRoot(List.of(t, x, s));
    }

    /** 10,000 sorted rows in groups of 500: the table of the filter tests. */
    Path sortedTable() throws IOException {
        Path path = dir.resolve("numbers.kpk");
        try (VectorSchemaRoot root = TableFixtures.sorted(allocator, 10_000);
                KompaktTableWriter w = KompaktTableWriter.create(path.toString(), root.getSchema(),
                        TableWriteOptions.builder().rowsPerGroup(500).sortedBy("t").build())) {
            w.write(root);
            w.finish();
        }
        return path;
    }

    @Test
    void statisticsPerRowGroup() throws IOException {
        Path path = sortedTable();
        try (KompaktTable t = KompaktTable.open(path)) {
            Optional<VectorSchemaRoot> stats = t.statistics(t.columnIndex("t"), allocator);
            assertTrue(stats.isPresent());
            try (VectorSchemaRoot s = stats.get()) {
                assertEquals(20, s.getRowCount());
                assertEquals(List.of("null_count", "min", "max"),
                        s.getSchema().getFields().stream().map(Field::getName).collect(Collectors.toList()));
                for (int g = 0; g < 20; g++) {
                    assertEquals(0L, ((Number) value(s.getVector("null_count"), g)).longValue());
                    assertEquals(g * 500L, s.getVector("min").getObject(g));
                    assertEquals(g * 500L + 499, s.getVector("max").getObject(g));
                }
            }
            try (VectorSchemaRoot s = t.statistics(t.columnIndex("x"), allocator).orElseThrow()) {
                // x is null on every 11th row: 45 or 46 of each group of 500.
                long nulls = 0;
                for (int g = 0; g < 20; g++) {
                    nulls += ((Number) value(s.getVector("null_count"), g)).longValue();
                }
                assertEquals(10_000 / 11 + 1, nulls);
            }
            assertThrows(InvalidOptionException.class, () -> t.statistics(99, allocator));
        }
    }

    @Test
    void planAndReadWhereSkipGroupsAndMatchABruteForceFilter() throws IOException {
        Path path = sortedTable();
        try (KompaktTable t = KompaktTable.open(path);
                VectorSchemaRoot all = t.read(allocator, null, 0, t.numRows())) {
            List<List<TableFilter>> cases = List.of(
                    List.of(TableFilter.of("t", ">=", 9_250L)),
                    List.of(TableFilter.of("t", "==", 1234)),
                    List.of(TableFilter.of("t", ">", 2_000L), TableFilter.of("t", "<", 2_600L), TableFilter.of("x", "<", 5)),
                    List.of(TableFilter.of("t", "in", 5L, 7_777L, 9_999L)),
                    List.of(TableFilter.of("s", "==", "k3"), TableFilter.of("t", "<=", 700)),
                    List.of(TableFilter.of("x", "not in", 1, 2, 3)),
                    List.of(TableFilter.of("x", "not in", 1, null)),
                    List.of(TableFilter.of("x", "in", 7, null), TableFilter.of("t", "<", 3_000)),
                    List.of(TableFilter.of("t", ">", 20_000L)),
                    List.of());
            for (List<TableFilter> filters : cases) {
                List<RowRange> plan = t.plan(0, t.numRows(), filters);
                List<Integer> expected = new ArrayList<>();
                for (int r = 0; r < all.getRowCount(); r++) {
                    if (passes(all, r, filters)) {
                        expected.add(r);
                        int row = r;
                        assertTrue(plan.stream().anyMatch(p -> p.from() <= row && row < p.to()),
                                () -> filters + ": row " + row + " passes but the plan " + plan + " leaves it out");
                    }
                }
                try (FilteredRead fr = t.readWhere(allocator, new int[] {0, 2}, 0, t.numRows(), filters, false)) {
                    List<Long> got = new ArrayList<>();
                    BigIntVector tv = (BigIntVector) fr.rows().getVector("t");
                    for (int i = 0; i < fr.rows().getRowCount(); i++) {
                        got.add(tv.get(i));
                    }
                    List<Long> want = expected.stream().map(Integer::longValue).collect(Collectors.toList());
                    if (!want.equals(got)) {
                        List<Long> missing = new ArrayList<>(want);
                        missing.removeAll(got);
                        List<Long> extra = new ArrayList<>(got);
                        extra.removeAll(want);
                        fail(filters + ": " + want.size() + " rows expected, " + got.size() + " read; missing "
                                + missing.subList(0, Math.min(10, missing.size())) + ", extra "
                                + extra.subList(0, Math.min(10, extra.size())));
                    }
                    assertEquals(List.of("t", "s"), fr.rows().getSchema().getFields().stream().map(Field::getName)
                            .collect(Collectors.toList()), "filter columns not asked for are dropped");
                    assertEquals(20, fr.groupsTotal());
                    assertTrue(fr.rowsScanned() >= expected.size());
                    if (filters.isEmpty()) {
                        assertEquals(20, fr.groupsRead());
                    }
                }
            }
            // Selective filters on the sort key read few groups.
            try (FilteredRead fr = t.readWhere(allocator, null, 0, t.numRows(),
                    List.of(TableFilter.of("t", ">=", 9_250L)), false)) {
                assertEquals(750, fr.rows().getRowCount());
                assertEquals(2, fr.groupsRead());
                assertTrue(fr.groupsRead() < fr.groupsTotal());
            }
            try (FilteredRead fr = t.readWhere(allocator, null, 0, t.numRows(),
                    List.of(TableFilter.of("t", "==", 1234L)), true)) {
                assertEquals(1, fr.rows().getRowCount());
                assertEquals(1, fr.groupsRead());
                assertEquals(3, fr.rows().getFieldVectors().size());
            }
            assertEquals(List.of(new RowRange(9_250, 10_000)), t.plan(0, t.numRows(),
                    List.of(TableFilter.of("t", ">=", 9_250L))));
            assertEquals(List.of(), t.plan(0, t.numRows(), List.of(TableFilter.of("t", "<", -5))));
            // A sub-range.
            try (FilteredRead fr = t.readWhere(allocator, null, 100, 200, List.of(TableFilter.of("x", ">=", 50)),
                    false)) {
                assertEquals(IntStreamCount.count(100, 200, r -> r % 11 != 0 && r % 100 >= 50),
                        fr.rows().getRowCount());
            }
        }
    }

    /** Counting helper. */
    static final class IntStreamCount {
        interface P {
            boolean test(int r);
        }

        static int count(int from, int to, P p) {
            int n = 0;
            for (int r = from; r < to; r++) {
                n += p.test(r) ? 1 : 0;
            }
            return n;
        }
    }

    /** Whether row {@code r} of the sorted table passes every filter (SQL semantics: null fails). */
    private static boolean passes(VectorSchemaRoot all, int r, List<TableFilter> filters) {
        for (TableFilter f : filters) {
            Object v = value(all.getVector(f.column()), r);
            if (v == null) {
                // kompakt's rule: a null row passes in if the list holds a null, not in if not.
                boolean nullListed = f.values().contains(null);
                if (f.op().equals("in") ? nullListed : f.op().equals("not in") && !nullListed) {
                    continue;
                }
                return false;
            }
            boolean ok;
            if (v instanceof String) {
                int cmp = ((String) v).compareTo((String) f.values().get(0));
                ok = compare(f.op(), cmp, f.values().contains(v));
            } else {
                long x = ((Number) v).longValue();
                long first = ((Number) f.values().get(0)).longValue();
                boolean in = f.values().stream().anyMatch(o -> o != null && ((Number) o).longValue() == x);
                ok = compare(f.op(), Long.compare(x, first), in);
            }
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private static boolean compare(String op, int cmp, boolean in) {
        switch (op) {
            case "==":
                return cmp == 0;
            case "!=":
                return cmp != 0;
            case "<":
                return cmp < 0;
            case "<=":
                return cmp <= 0;
            case ">":
                return cmp > 0;
            case ">=":
                return cmp >= 0;
            case "in":
                return in;
            default:
                return !in;
        }
    }

    @Test
    void filtersOnEveryComparableType() throws IOException {
        try (TableFixtures.EveryType data = TableFixtures.everyType(allocator, ROWS, 0)) {
            Path path = writeEveryType(data, TableWriteOptions.builder().rowsPerGroup(64).build());
            try (KompaktTable t = KompaktTable.open(path)) {
                // Values of row 10 (11 where row 10 is null), as Java values: each filter == keeps
                // exactly the rows equal to it.
                record At(TableFilter filter, int row) {}
                List<At> filters = List.of(
                        new At(TableFilter.of("int8", "==", (byte) (10 - 128)), 10),
                        new At(TableFilter.of("int16", "==", (short) (10 * 37 - 20_000)), 10),
                        new At(TableFilter.of("int32", "==", 10 * 1_000_003 - 1_000_000_000), 10),
                        new At(TableFilter.of("int64", "==", 11 * 1_000_000_007_000L - Long.MAX_VALUE / 2), 11),
                        new At(TableFilter.of("uint8", "==", 210), 10),
                        new At(TableFilter.of("uint16", "==", 40_010), 10),
                        new At(TableFilter.of("uint32", "==", 3_000_000_010L), 10),
                        new At(TableFilter.of("uint64", "==", TableFixtures.unsigned(Long.MIN_VALUE + 10)), 10),
                        new At(TableFilter.of("uint64", "==", new BigDecimal(TableFixtures.unsigned(Long.MIN_VALUE + 10))), 10),
                        new At(TableFilter.of("float16", "==", 2.5f), 10),
                        new At(TableFilter.of("float32", "==", 1.25f), 10),
                        new At(TableFilter.of("float64", "==", 11 * Math.PI), 11),
                        new At(TableFilter.of("decimal", "==", BigDecimal.valueOf(10 * 12_345 - 50_000_000L, 3)), 10),
                        new At(TableFilter.of("date32", "==", LocalDate.ofEpochDay(19_010)), 10),
                        new At(TableFilter.of("date32", "==", java.sql.Date.valueOf(LocalDate.ofEpochDay(19_010))), 10),
                        new At(TableFilter.of("date64", "==", LocalDate.ofEpochDay(19_010)), 10),
                        new At(TableFilter.of("time32_s", "==", LocalTime.ofSecondOfDay(10)), 10),
                        new At(TableFilter.of("ts_s", "==", LocalDateTime.ofEpochSecond(1_700_000_070L, 0, ZoneOffset.UTC)), 10),
                        new At(TableFilter.of("ts_us", "==",
                                LocalDateTime.ofEpochSecond(1_700_000_000L, 70_000_000, ZoneOffset.UTC)), 10),
                        new At(TableFilter.of("tstz_s", "==", Instant.ofEpochSecond(1_700_000_070L)), 10),
                        new At(TableFilter.of("tstz_ms", "==", java.sql.Timestamp.from(Instant.ofEpochSecond(1_700_000_070L))), 10),
                        new At(TableFilter.of("tstz_ns", "==", Instant.ofEpochSecond(1_700_000_000L, 70_000_000)), 10),
                        new At(TableFilter.of("dur_s", "==", java.time.Duration.ofSeconds(30 - 1000)), 10),
                        new At(TableFilter.of("utf8", "==", "row 10 é"), 10),
                        new At(TableFilter.of("large_utf8", "==", "large 77"), 11),
                        new At(TableFilter.of("binary", "==", TableFixtures.bytes(10, 1)), 10),
                        new At(TableFilter.of("fixed_binary", "==", TableFixtures.bytes(10, 4)), 10),
                        new At(TableFilter.of("dict", "in", "red", "nothing"), 10),
                        new At(TableFilter.of("bool", "==", false), 10));
                for (At at : filters) {
                    TableFilter f = at.filter();
                    int r = at.row();
                    assertTrue(t.accepts(f), f.toString());
                    try (FilteredRead fr = t.readWhere(allocator, null, 0, ROWS, List.of(f), false)) {
                        FieldVector col = data.root.getVector(f.column());
                        int expected = 0;
                        for (int i = 0; i < ROWS; i++) {
                            Object want = col.getField().getDictionary() != null
                                    ? TableFixtures.decoded(col, data.dictionaries, i) : value(col, i);
                            Object at10 = col.getField().getDictionary() != null
                                    ? TableFixtures.decoded(col, data.dictionaries, r) : value(col, r);
                            if (want != null && want.equals(at10)) {
                                expected++;
                            }
                        }
                        assertTrue(expected >= 1, f.toString());
                        assertEquals(expected, fr.rows().getRowCount(), f.toString());
                    }
                }
            }
        }
    }

    @Test
    void acceptsRefusesWhatDoesNotConvert() throws IOException {
        try (TableFixtures.EveryType data = TableFixtures.everyType(allocator, 50, 0)) {
            Path path = writeEveryType50(data);
            try (KompaktTable t = KompaktTable.open(path)) {
                List<TableFilter> refused = List.of(
                        TableFilter.of("int8", "==", 300),                       // out of range
                        TableFilter.of("uint8", "<", -1),
                        TableFilter.of("uint64", "==", BigInteger.ONE.shiftLeft(64)),
                        TableFilter.of("int32", "==", 1.5),                      // not an integer
                        TableFilter.of("int32", "==", "1"),
                        TableFilter.of("float32", "==", 0.1),                    // not exact in a float
                        TableFilter.of("decimal", "==", new BigDecimal("1.0001")), // finer than scale 3
                        TableFilter.of("ts_s", "==", LocalDateTime.of(2024, 1, 1, 0, 0, 0, 5)), // finer than s
                        TableFilter.of("ts_s", "==", Instant.EPOCH),            // an instant for a zoneless column
                        TableFilter.of("tstz_s", "==", LocalDateTime.of(2024, 1, 1, 0, 0)), // wall time for a zoned one
                        TableFilter.of("date32", "==", "2024-01-01"),
                        TableFilter.of("fixed_binary", "==", new byte[3]),      // wrong width
                        TableFilter.of("utf8", "like", "x"),                     // unknown op
                        TableFilter.of("utf8", "==", "a", "b"),                  // two values for ==
                        TableFilter.of("nothing", "==", 1),                      // no such column
                        TableFilter.of("list", "==", 1),                         // not comparable
                        TableFilter.of("struct", "==", 1));
                for (TableFilter f : refused) {
                    assertFalse(t.accepts(f), f.toString());
                    InvalidOptionException e = assertThrows(InvalidOptionException.class,
                            () -> t.plan(0, t.numRows(), List.of(f)), f.toString());
                    assertTrue(e.getMessage().contains(f.column()), e.getMessage());
                    assertThrows(InvalidOptionException.class,
                            () -> t.readWhere(allocator, null, 0, t.numRows(), List.of(f), false).close(), f.toString());
                }
                assertFalse(t.accepts(null));
                assertTrue(t.accepts(TableFilter.of("int8", "in")), "an empty list converts");
            }
        }
    }

    Path writeEveryType50(TableFixtures.EveryType data) throws IOException {
        Path path = dir.resolve("every50.kpk");
        try (KompaktTableWriter w = KompaktTableWriter.create(path.toString(), data.root.getSchema(), null,
                data.dictionaries)) {
            w.write(data.root);
            w.finish();
        }
        return path;
    }

    @Test
    void badOptionsNameTheOption() {
        record Case(String option, TableWriteOptions.Builder builder) {}
        List<Case> cases = List.of(
                new Case("codec", TableWriteOptions.builder().codec("nope")),
                new Case("level", TableWriteOptions.builder().level(101)),
                new Case("threads", TableWriteOptions.builder().threads(-1)),
                new Case("rows per group", TableWriteOptions.builder().rowsPerGroup(0)),
                new Case("codec", TableWriteOptions.builder().stringCodec("zstd:99")));
        for (Case c : cases) {
            InvalidOptionException e = assertThrows(InvalidOptionException.class, c.builder::build, c.option);
            assertEquals(ErrorKind.OPTION, e.kind());
            String m = e.getMessage().toLowerCase(java.util.Locale.ROOT).replace('_', ' ');
            assertTrue(m.contains(c.option), () -> c.option + ": " + e.getMessage());
        }
    }

    /**
     * The rows of crates/kompakt-api/tests/bad_options.tsv whose options tables take too (codec,
     * level, threads): TableWriteOptions refuses them with the same message as every front end.
     */
    @Test
    void theBadOptionsTableForTables() throws IOException {
        Path table = TestSupport.requiredPath("KOMPAKT_BAD_OPTIONS",
                "/work/main/crates/kompakt-api/tests/bad_options.tsv");
        List<String> failures = new ArrayList<>();
        int rows = 0;
        for (String line : Files.readAllLines(table)) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\t", -1);
            TableWriteOptions.Builder b = TableWriteOptions.builder();
            boolean applies = true;
            for (String option : f[1].split(";")) {
                String[] kv = option.split("=", 2);
                switch (kv[0]) {
                    case "codec":
                        b.codec(kv[1]);
                        break;
                    case "level":
                        b.level(Integer.parseInt(kv[1]));
                        break;
                    case "threads":
                        b.threads(Integer.parseInt(kv[1]));
                        break;
                    default:
                        applies = false;
                }
            }
            if (!applies) {
                continue;
            }
            rows++;
            try {
                failures.add(f[0] + ": accepted (" + b.build() + ")");
            } catch (InvalidOptionException e) {
                if (!e.getMessage().contains(f[3])) {
                    failures.add(f[0] + ": \"" + e.getMessage() + "\" does not contain \"" + f[3] + "\"");
                }
            }
        }
        assertTrue(rows >= 6, "rows: " + rows);
        assertTrue(failures.isEmpty(), String.join("\n", failures));
        // Reading threads are checked too.
        Path path = dir.resolve("t.kpk");
        try (VectorSchemaRoot root = TableFixtures.sorted(allocator, 10);
                KompaktTableWriter w = KompaktTableWriter.create(path.toString(), root.getSchema(), null)) {
            w.write(root);
            w.finish();
        }
        InvalidOptionException e = assertThrows(InvalidOptionException.class,
                () -> KompaktTable.open(path.toString(), 1000).close());
        assertTrue(e.getMessage().contains("threads"), e.getMessage());
        KompaktIOException missing = assertThrows(KompaktIOException.class,
                () -> KompaktTable.open(dir.resolve("missing.kpk")).close());
        assertTrue(missing.getMessage().contains("missing.kpk"), missing.getMessage());
    }

    @Test
    void writerRefusalsAndUsage() throws IOException {
        Path path = dir.resolve("w.kpk");
        try (VectorSchemaRoot root = TableFixtures.sorted(allocator, 100)) {
            // A sort key that names no column.
            assertThrows(InvalidOptionException.class, () -> KompaktTableWriter.create(path.toString(),
                    root.getSchema(), TableWriteOptions.builder().sortedBy("nope").build()).close());
            // Rows out of the declared order.
            try (KompaktTableWriter w = KompaktTableWriter.create(path.toString(), root.getSchema(),
                    TableWriteOptions.builder().sortedBy(SortKey.descending("t")).build())) {
                assertThrows(KompaktException.class, () -> w.write(root));
            } catch (InvalidOptionException expected) {
                // Either kind names the order; both are kompakt's.
            }
            KompaktTableWriter w = KompaktTableWriter.create(path.toString(), root.getSchema(), null);
            w.write(root);
            assertEquals(100, w.finish());
            assertThrows(KompaktUsageException.class, () -> w.write(root));
            assertThrows(KompaktUsageException.class, w::finish);
            w.close();
            KompaktTable t = KompaktTable.open(path);
            t.close();
            t.close();
            assertThrows(KompaktUsageException.class, () -> t.read(allocator, null, 0, 1));
            assertThrows(KompaktUsageException.class, () -> t.plan(0, 1, List.of()));
            assertEquals(100, t.numRows(), "the index stays available");
            assertTrue(t.toString().contains("closed"));
        }
    }

    @Test
    void closeBeforeFinishLeavesNoFile() throws IOException {
        Path folder = Files.createDirectory(dir.resolve("abandoned"));
        Path path = folder.resolve("t.kpk");
        try (VectorSchemaRoot root = TableFixtures.sorted(allocator, 1000)) {
            KompaktTableWriter w = KompaktTableWriter.create(path.toString(), root.getSchema(),
                    TableWriteOptions.builder().rowsPerGroup(100).build());
            w.write(root);
            w.write(root);
            assertEquals(2000, w.rowsWritten());
            w.close();
            w.close();
            try (Stream<Path> left = Files.list(folder)) {
                assertEquals(List.of(), left.collect(Collectors.toList()), "no file, no temporary file");
            }
            // A finished file replaced by a second writer that is abandoned stays as it was.
            try (KompaktTableWriter w2 = KompaktTableWriter.create(path.toString(), root.getSchema(), null)) {
                w2.write(root);
                w2.finish();
            }
            byte[] before = Files.readAllBytes(path);
            try (KompaktTableWriter w3 = KompaktTableWriter.create(path.toString(), root.getSchema(), null)) {
                w3.write(root);
                w3.write(root);
            }
            assertArrayEquals(before, Files.readAllBytes(path));
            try (Stream<Path> left = Files.list(folder)) {
                assertEquals(List.of(path), left.collect(Collectors.toList()));
            }
        }
    }

    @Test
    void listFindsTableFiles() throws IOException {
        Path folder = Files.createDirectory(dir.resolve("many"));
        try (VectorSchemaRoot root = TableFixtures.sorted(allocator, 10)) {
            for (String name : List.of("b.kpk", "a.kpk", "_meta.kpk", ".hidden.kpk")) {
                try (KompaktTableWriter w = KompaktTableWriter.create(folder.resolve(name).toString(),
                        root.getSchema(), null)) {
                    w.write(root);
                    w.finish();
                }
            }
        }
        Files.writeString(folder.resolve("notes.txt"), "not a table");
        assertEquals(List.of(folder.resolve("a.kpk").toString(), folder.resolve("b.kpk").toString()),
                KompaktTable.list(folder.toString()));
        assertEquals(List.of(folder.resolve("b.kpk").toString()), KompaktTable.list(folder.resolve("b*.kpk").toString()));
        assertEquals(List.of(folder.resolve("a.kpk").toString()), KompaktTable.list(folder.resolve("a.kpk").toString()));
        KompaktIOException e = assertThrows(KompaktIOException.class,
                () -> KompaktTable.list(folder.resolve("z*.kpk").toString()));
        assertTrue(e.getMessage().contains("z*.kpk"), e.getMessage());
    }

    @Test
    void batchesReadAreWrittenAgain() throws IOException {
        // A TableBatch is its own dictionary provider: read, then write it to a new table.
        try (TableFixtures.EveryType data = TableFixtures.everyType(allocator, 80, 0)) {
            Path first = writeEveryType50(data);
            Path second = dir.resolve("copy.kpk");
            try (KompaktTable t = KompaktTable.open(first);
                    VectorSchemaRoot rows = t.read(allocator, null, 0, t.numRows())) {
                try (KompaktTableWriter w = KompaktTableWriter.create(second.toString(), t.schema(), null,
                        (DictionaryProvider) rows)) {
                    w.write(rows);
                    w.finish();
                }
                try (KompaktTable copy = KompaktTable.open(second);
                        VectorSchemaRoot again = copy.read(allocator, null, 0, copy.numRows())) {
                    assertRowsEqual(data.root, data.dictionaries, 0, again, (DictionaryProvider) again);
                }
            }
        }
    }

    @Test
    void timestampFilterUnits() {
        assertEquals(1_700_000_000_123L, TableArrow.inUnit(1_700_000_000L, 123_000_000, TimeUnit.MILLISECOND));
        assertEquals(null, TableArrow.inUnit(1_700_000_000L, 123_000_001, TimeUnit.MILLISECOND));
        assertEquals(null, TableArrow.inUnit(Long.MAX_VALUE / 10, 0, TimeUnit.NANOSECOND));
        assertEquals(-1_000_000_000L + 5, TableArrow.inUnit(-1, 5, TimeUnit.NANOSECOND));
    }
}

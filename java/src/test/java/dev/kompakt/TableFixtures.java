package dev.kompakt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.DurationVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float2Vector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TimeStampMilliTZVector;
import org.apache.arrow.vector.TimeStampMilliVector;
import org.apache.arrow.vector.TimeStampNanoTZVector;
import org.apache.arrow.vector.TimeStampNanoVector;
import org.apache.arrow.vector.TimeStampSecTZVector;
import org.apache.arrow.vector.TimeStampSecVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.UInt2Vector;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.util.Text;

/**
 * Tables for the tests: one column of every type the table format holds, with nulls, and a
 * sorted table for the filter tests; plus value-by-value comparison.
 */
final class TableFixtures {
    private TableFixtures() {}

    /** The dictionary of the "dict" column. */
    static final String[] COLORS = {"red", "green", "blue", "cyan", "magenta"};
    static final long DICT_ID = 7L;

    /** Whether row {@code i} of column {@code c} is null: every 7th row, shifted per column. */
    static boolean isNull(int c, int i) {
        return (i + c) % 7 == 0;
    }

    /** A batch of every type plus its dictionaries (the caller closes both). */
    static final class EveryType implements AutoCloseable {
        final VectorSchemaRoot root;
        final DictionaryProvider.MapDictionaryProvider dictionaries;

        EveryType(VectorSchemaRoot root, DictionaryProvider.MapDictionaryProvider dictionaries) {
            this.root = root;
            this.dictionaries = dictionaries;
        }

        @Override
        public void close() {
            root.close();
            dictionaries.close();
        }
    }

    /** Column names of {@link #everyType} whose type is a time of day (no portable type). */
    static final List<String> TIME_COLUMNS = List.of("time32_s", "time32_ms", "time64_us", "time64_ns");

    /**
     * {@code n} rows (starting at value {@code base}) of one column per type: bool, int8-64,
     * uint8-64 (large unsigned values), float16/32/64, decimal128, date32/64, time32/64,
     * timestamps of every unit with and without zone, durations, utf8, large_utf8, binary,
     * large_binary, fixed_size_binary, a dictionary of strings, a list of int32 and a struct.
     */
    static EveryType everyType(BufferAllocator a, int n, int base) {
        List<FieldVector> vs = new ArrayList<>();
        int c = 0;
        BitVector bool = new BitVector("bool", a);
        TinyIntVector i8 = new TinyIntVector("int8", a);
        SmallIntVector i16 = new SmallIntVector("int16", a);
        IntVector i32 = new IntVector("int32", a);
        BigIntVector i64 = new BigIntVector("int64", a);
        UInt1Vector u8 = new UInt1Vector("uint8", a);
        UInt2Vector u16 = new UInt2Vector("uint16", a);
        UInt4Vector u32 = new UInt4Vector("uint32", a);
        UInt8Vector u64 = new UInt8Vector("uint64", a);
        Float2Vector f16 = new Float2Vector("float16", a);
        Float4Vector f32 = new Float4Vector("float32", a);
        Float8Vector f64 = new Float8Vector("float64", a);
        DecimalVector dec = new DecimalVector("decimal", a, 20, 3);
        DateDayVector d32 = new DateDayVector("date32", a);
        DateMilliVector d64 = new DateMilliVector("date64", a);
        TimeSecVector ts32 = new TimeSecVector("time32_s", a);
        TimeMilliVector tms32 = new TimeMilliVector("time32_ms", a);
        TimeMicroVector tus64 = new TimeMicroVector("time64_us", a);
        TimeNanoVector tns64 = new TimeNanoVector("time64_ns", a);
        TimeStampVector[] stamps = {
            new TimeStampSecVector("ts_s", a), new TimeStampMilliVector("ts_ms", a),
            new TimeStampMicroVector("ts_us", a), new TimeStampNanoVector("ts_ns", a),
            new TimeStampSecTZVector("tstz_s", a, "UTC"), new TimeStampMilliTZVector("tstz_ms", a, "UTC"),
            new TimeStampMicroTZVector("tstz_us", a, "Europe/Oslo"), new TimeStampNanoTZVector("tstz_ns", a, "UTC"),
        };
        DurationVector[] durations = {
            new DurationVector("dur_s", FieldType.nullable(new ArrowType.Duration(TimeUnit.SECOND)), a),
            new DurationVector("dur_ms", FieldType.nullable(new ArrowType.Duration(TimeUnit.MILLISECOND)), a),
            new DurationVector("dur_us", FieldType.nullable(new ArrowType.Duration(TimeUnit.MICROSECOND)), a),
            new DurationVector("dur_ns", FieldType.nullable(new ArrowType.Duration(TimeUnit.NANOSECOND)), a),
        };
        VarCharVector utf8 = new VarCharVector("utf8", a);
        LargeVarCharVector lutf8 = new LargeVarCharVector("large_utf8", a);
        VarBinaryVector bin = new VarBinaryVector("binary", a);
        LargeVarBinaryVector lbin = new LargeVarBinaryVector("large_binary", a);
        FixedSizeBinaryVector fbin = new FixedSizeBinaryVector("fixed_binary", a, 4);
        DictionaryEncoding enc = new DictionaryEncoding(DICT_ID, false, new ArrowType.Int(32, true));
        IntVector dict = new IntVector("dict", new FieldType(true, new ArrowType.Int(32, true), enc), a);
        ListVector list = ListVector.empty("list", a);
        StructVector struct = StructVector.empty("struct", a);
        IntVector sa = struct.addOrGet("a", FieldType.nullable(new ArrowType.Int(32, true)), IntVector.class);
        VarCharVector sb = struct.addOrGet("b", FieldType.nullable(ArrowType.Utf8.INSTANCE), VarCharVector.class);

        vs.addAll(List.of(bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64, dec, d32, d64, ts32, tms32,
                tus64, tns64));
        vs.addAll(Arrays.asList(stamps));
        vs.addAll(Arrays.asList(durations));
        vs.addAll(List.of(utf8, lutf8, bin, lbin, fbin, dict, list, struct));
        for (FieldVector v : vs) {
            v.setInitialCapacity(n);
            v.allocateNew();
        }
        UnionListWriter lw = list.getWriter();
        for (int r = 0; r < n; r++) {
            long i = base + r;
            c = 0;
            if (!isNull(c++, r)) {
                bool.setSafe(r, i % 3 == 0 ? 1 : 0);
            }
            if (!isNull(c++, r)) {
                i8.setSafe(r, (byte) (i % 256 - 128));
            }
            if (!isNull(c++, r)) {
                i16.setSafe(r, (short) (i * 37 - 20_000));
            }
            if (!isNull(c++, r)) {
                i32.setSafe(r, (int) (i * 1_000_003 - 1_000_000_000));
            }
            if (!isNull(c++, r)) {
                i64.setSafe(r, i * 1_000_000_007_000L - Long.MAX_VALUE / 2);
            }
            if (!isNull(c++, r)) {
                u8.setSafe(r, (byte) (200 + i % 56)); // above 127: the unsigned range
            }
            if (!isNull(c++, r)) {
                u16.setSafe(r, (char) (40_000 + i));
            }
            if (!isNull(c++, r)) {
                u32.setSafe(r, (int) (3_000_000_000L + i));
            }
            if (!isNull(c++, r)) {
                u64.setSafe(r, Long.MIN_VALUE + i); // 2^63 + i as unsigned
            }
            if (!isNull(c++, r)) {
                f16.setSafeWithPossibleTruncate(r, (float) (i % 64) / 4);
            }
            if (!isNull(c++, r)) {
                f32.setSafe(r, (float) i / 8);
            }
            if (!isNull(c++, r)) {
                f64.setSafe(r, i * Math.PI);
            }
            if (!isNull(c++, r)) {
                dec.setSafe(r, BigDecimal.valueOf(i * 12_345 - 50_000_000L, 3));
            }
            if (!isNull(c++, r)) {
                d32.setSafe(r, (int) (19_000 + i));
            }
            if (!isNull(c++, r)) {
                d64.setSafe(r, (19_000 + i) * 86_400_000L);
            }
            if (!isNull(c++, r)) {
                ts32.setSafe(r, (int) (i % 86_400));
            }
            if (!isNull(c++, r)) {
                tms32.setSafe(r, (int) (i * 1_001 % 86_400_000));
            }
            if (!isNull(c++, r)) {
                tus64.setSafe(r, i * 1_000_001 % 86_400_000_000L);
            }
            if (!isNull(c++, r)) {
                tns64.setSafe(r, i * 1_000_000_001L % 86_400_000_000_000L);
            }
            long[] perSecond = {1, 1_000, 1_000_000, 1_000_000_000};
            for (int k = 0; k < stamps.length; k++) {
                if (!isNull(c++, r)) {
                    // Whole microseconds, so that portable reads (in microseconds) are exact.
                    long unit = perSecond[k % 4];
                    long value = 1_700_000_000L * unit + i * (unit >= 1_000_000 ? unit / 1000 * 7 : unit * 7);
                    stamps[k].setSafe(r, value);
                }
            }
            for (int k = 0; k < durations.length; k++) {
                if (!isNull(c++, r)) {
                    long unit = perSecond[k];
                    durations[k].setSafe(r, i * (unit >= 1_000_000 ? unit / 1000 * 3 : unit * 3) - 1000 * unit);
                }
            }
            if (!isNull(c++, r)) {
                utf8.setSafe(r, ("row " + i + " é").getBytes(StandardCharsets.UTF_8));
            }
            if (!isNull(c++, r)) {
                lutf8.setSafe(r, ("large " + i * 7).getBytes(StandardCharsets.UTF_8));
            }
            if (!isNull(c++, r)) {
                bin.setSafe(r, bytes(i, (int) (i % 9)));
            }
            if (!isNull(c++, r)) {
                lbin.setSafe(r, bytes(i * 3, (int) (i % 5)));
            }
            if (!isNull(c++, r)) {
                fbin.setSafe(r, bytes(i, 4));
            }
            if (!isNull(c++, r)) {
                dict.setSafe(r, (int) (i % COLORS.length));
            }
            if (!isNull(c++, r)) {
                lw.setPosition(r);
                lw.startList();
                for (int k = 0; k < i % 4; k++) {
                    lw.writeInt((int) (i + k));
                }
                lw.endList();
            }
            if (!isNull(c++, r)) {
                struct.setIndexDefined(r);
                if (r % 3 != 0) {
                    sa.setSafe(r, (int) i);
                }
                sb.setSafe(r, ("s" + i).getBytes(StandardCharsets.UTF_8));
            } else {
                struct.setNull(r);
            }
        }
        lw.setValueCount(n);
        for (FieldVector v : vs) {
            v.setValueCount(n);
        }
        VarCharVector colors = new VarCharVector("dict_values", a);
        colors.allocateNew();
        for (int k = 0; k < COLORS.length; k++) {
            colors.setSafe(k, COLORS[k].getBytes(StandardCharsets.UTF_8));
        }
        colors.setValueCount(COLORS.length);
        DictionaryProvider.MapDictionaryProvider provider =
                new DictionaryProvider.MapDictionaryProvider(new Dictionary(colors, enc));
        return new EveryType(new VectorSchemaRoot(vs), provider);
    }

    static byte[] bytes(long seed, int length) {
        byte[] b = new byte[length];
        for (int k = 0; k < length; k++) {
            b[k] = (byte) (seed * 31 + k * 7);
        }
        return b;
    }

    /**
     * A value as comparable Java data: bytes as a list, text as a String, unsigned integers as
     * their unsigned values, timestamps as raw numbers, lists and maps element by element.
     */
    static Object value(ValueVector v, int i) {
        if (v.isNull(i)) {
            return null;
        }
        if (v instanceof UInt1Vector) {
            return (long) UInt1Vector.getNoOverflow(((UInt1Vector) v).getDataBuffer(), i);
        }
        if (v instanceof UInt2Vector) {
            return (long) ((UInt2Vector) v).get(i);
        }
        if (v instanceof UInt4Vector) {
            return UInt4Vector.getNoOverflow(((UInt4Vector) v).getDataBuffer(), i);
        }
        if (v instanceof UInt8Vector) {
            return UInt8Vector.getNoOverflow(((UInt8Vector) v).getDataBuffer(), i);
        }
        if (v instanceof TimeStampVector) {
            return ((TimeStampVector) v).get(i);
        }
        if (v instanceof DurationVector) {
            return DurationVector.get(((DurationVector) v).getDataBuffer(), i);
        }
        if (v instanceof Float2Vector) {
            return ((Float2Vector) v).getValueAsFloat(i);
        }
        return plain(v.getObject(i));
    }

    static Object plain(Object o) {
        if (o instanceof byte[]) {
            byte[] b = (byte[]) o;
            List<Byte> out = new ArrayList<>();
            for (byte x : b) {
                out.add(x);
            }
            return out;
        }
        if (o instanceof Text) {
            return o.toString();
        }
        if (o instanceof List) {
            List<Object> out = new ArrayList<>();
            for (Object x : (List<?>) o) {
                out.add(plain(x));
            }
            return out;
        }
        if (o instanceof java.util.Map) {
            java.util.Map<Object, Object> out = new java.util.TreeMap<>();
            for (java.util.Map.Entry<?, ?> e : ((java.util.Map<?, ?>) o).entrySet()) {
                out.put(e.getKey().toString(), plain(e.getValue()));
            }
            return out;
        }
        return o;
    }

    /** The values of a dictionary-encoded column, decoded through {@code provider}. */
    static Object decoded(FieldVector keys, DictionaryProvider provider, int i) {
        if (keys.isNull(i)) {
            return null;
        }
        Dictionary d = provider.lookup(keys.getField().getDictionary().getId());
        int k = ((Number) keys.getObject(i)).intValue();
        return value(d.getVector(), k);
    }

    /** Every column of {@code actual} equals {@code expected}'s rows {@code [from, from + rows)}, value by value. */
    static void assertRowsEqual(VectorSchemaRoot expected, DictionaryProvider expectedDicts, int from,
            VectorSchemaRoot actual, DictionaryProvider actualDicts) {
        for (FieldVector a : actual.getFieldVectors()) {
            FieldVector e = expected.getVector(a.getName());
            for (int r = 0; r < actual.getRowCount(); r++) {
                Object want = e.getField().getDictionary() != null ? decoded(e, expectedDicts, from + r)
                        : value(e, from + r);
                Object got = a.getField().getDictionary() != null ? decoded(a, actualDicts, r) : value(a, r);
                int row = r;
                assertEquals(want, got, () -> "column " + a.getName() + ", row " + (from + row));
            }
        }
    }

    /** Sorted numbers: {@code t} = 0..n-1 ascending, {@code x} = t % 100 with nulls, {@code s} text. */
    static VectorSchemaRoot sorted(BufferAllocator a, int n) {
        BigIntVector t = new BigIntVector("t", a);
        IntVector x = new IntVector("x", a);
        VarCharVector s = new VarCharVector("s", a);
        t.allocateNew(n);
        x.allocateNew(n);
        s.allocateNew();
        for (int i = 0; i < n; i++) {
            t.set(i, i);
            if (i % 11 != 0) {
                x.set(i, i % 100);
            }
            s.setSafe(i, ("k" + (i % 13)).getBytes(StandardCharsets.UTF_8));
        }
        t.setValueCount(n);
        x.setValueCount(n);
        s.setValueCount(n);
        VectorSchemaRoot root = new VectorSchemaRoot(List.of(t, x, s));
        assertTrue(root.getRowCount() == n);
        return root;
    }

    static BigInteger unsigned(long bits) {
        return new BigInteger(Long.toUnsignedString(bits));
    }
}

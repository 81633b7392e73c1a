package dev.kompakt;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.CDataDictionaryProvider;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.memory.util.Float16;
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
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.UInt2Vector;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Arrow across the C data interface for the table classes: importing what a native call
 * exports, exporting batches and schemas into native calls (which move them), and filter
 * values as one-column arrays of a column's type.
 *
 * <p>Structs are always closed here. A struct filled by a call is imported (Arrow releases it)
 * or released if the import never happened; a struct moved into a call is released by Rust,
 * and released here only if the call never took it (release is a no-op on a moved struct).
 */
final class TableArrow {
    private TableArrow() {}

    /** The allocator of structs, schemas and filter values: a root made when first needed. */
    private static final class Root {
        static final BufferAllocator ALLOCATOR = new RootAllocator();
    }

    static BufferAllocator allocator() {
        return Root.ALLOCATOR;
    }

    /** A native call that fills a schema and an array struct; false if it exported nothing. */
    interface Fill {
        boolean into(long schemaAddress, long arrayAddress) throws KompaktException;
    }

    /** A native call that fills a schema struct. */
    interface FillSchema {
        void into(long schemaAddress) throws KompaktException;
    }

    /** A native call that takes (moves) a schema and an array struct. */
    interface Take<T> {
        T from(long schemaAddress, long arrayAddress) throws KompaktException;
    }

    /** A native call that takes filter values: one schema and one array address per filter. */
    interface TakeValues<T> {
        T from(long[] schemaAddresses, long[] arrayAddresses) throws KompaktException;
    }

    /**
     * The batch a native call exports, imported with {@code allocator}; null if the call
     * exported nothing.
     */
    static TableBatch importBatch(BufferAllocator allocator, Fill fill) throws KompaktException {
        ArrowSchema schema = ArrowSchema.allocateNew(allocator);
        ArrowArray array = null;
        boolean imported = false;
        try {
            array = ArrowArray.allocateNew(allocator);
            if (!fill.into(schema.memoryAddress(), array.memoryAddress())) {
                return null;
            }
            CDataDictionaryProvider dictionaries = new CDataDictionaryProvider();
            try {
                VectorSchemaRoot root = Data.importVectorSchemaRoot(allocator, array, schema, dictionaries);
                imported = true;
                return new TableBatch(root, dictionaries);
            } catch (RuntimeException | Error e) {
                dictionaries.close();
                throw e;
            }
        } finally {
            if (!imported) {
                // A failed call or import: whatever was filled goes (no-op on an empty struct).
                schema.release();
                if (array != null) {
                    array.release();
                }
            }
            schema.close();
            if (array != null) {
                array.close();
            }
        }
    }

    /** A schema as a native call exports it, and per column the field its values have. */
    record Imported(Schema schema, List<Field> plainFields) {}

    /**
     * The schema a native call exports. {@code plainFields} gets, per column, the field of its
     * values: the column's own, or for a dictionary column its dictionary's value field.
     */
    static Imported importSchema(FillSchema fill) throws KompaktException {
        BufferAllocator allocator = allocator();
        ArrowSchema c = ArrowSchema.allocateNew(allocator);
        boolean imported = false;
        try {
            fill.into(c.memoryAddress());
            try (CDataDictionaryProvider dictionaries = new CDataDictionaryProvider()) {
                imported = true; // importSchema releases the struct, whatever happens
                Schema schema = Data.importSchema(allocator, c, dictionaries);
                List<Field> plain = new ArrayList<>();
                for (Field f : schema.getFields()) {
                    if (f.getDictionary() == null) {
                        plain.add(f);
                    } else {
                        org.apache.arrow.vector.dictionary.Dictionary d =
                                dictionaries.lookup(f.getDictionary().getId());
                        Field values = d.getVector().getField();
                        plain.add(new Field(f.getName(), new FieldType(true, values.getType(), null),
                                values.getChildren()));
                    }
                }
                return new Imported(schema, plain);
            }
        } finally {
            if (!imported) {
                c.release();
            }
            c.close();
        }
    }

    /** Exports {@code batch} (dictionaries from {@code dictionaries}) and moves it into {@code take}. */
    static <T> T exportBatch(VectorSchemaRoot batch, DictionaryProvider dictionaries, Take<T> take)
            throws KompaktException {
        // Arrow exports buffers only to an allocator of their own root: the batch's.
        BufferAllocator allocator = batch.getFieldVectors().isEmpty() ? allocator()
                : batch.getVector(0).getAllocator();
        ArrowSchema schema = ArrowSchema.allocateNew(allocator);
        ArrowArray array = null;
        try {
            array = ArrowArray.allocateNew(allocator);
            Data.exportVectorSchemaRoot(allocator, batch, dictionaries, array, schema);
            return take.from(schema.memoryAddress(), array.memoryAddress());
        } finally {
            // Rust released them (moved); these are no-ops then, and free them if it never got them.
            schema.release();
            schema.close();
            if (array != null) {
                array.release();
                array.close();
            }
        }
    }

    /** Exports a schema and moves it into {@code take} (called with an array address of 0). */
    static <T> T exportSchema(Schema schema, DictionaryProvider dictionaries, Take<T> take) throws KompaktException {
        BufferAllocator allocator = allocator();
        ArrowSchema c = ArrowSchema.allocateNew(allocator);
        try {
            Data.exportSchema(allocator, schema, dictionaries, c);
            return take.from(c.memoryAddress(), 0);
        } finally {
            c.release();
            c.close();
        }
    }

    /**
     * Exports the values of {@code filters} as arrays of their columns' value types
     * ({@code fields}, found by name) and moves them into {@code take}.
     *
     * @throws InvalidOptionException if a filter's column or values do not fit
     */
    static <T> T exportFilterValues(List<Field> fields, List<TableFilter> filters, TakeValues<T> take)
            throws KompaktException {
        BufferAllocator allocator = allocator();
        int n = filters.size();
        ArrowSchema[] schemas = new ArrowSchema[n];
        ArrowArray[] arrays = new ArrowArray[n];
        long[] schemaAddresses = new long[n];
        long[] arrayAddresses = new long[n];
        try {
            for (int i = 0; i < n; i++) {
                TableFilter f = filters.get(i);
                Field field = fieldOf(fields, f);
                schemas[i] = ArrowSchema.allocateNew(allocator);
                arrays[i] = ArrowArray.allocateNew(allocator);
                try (FieldVector values = filterValues(allocator, field, f)) {
                    Data.exportVector(allocator, values, null, arrays[i], schemas[i]);
                }
                schemaAddresses[i] = schemas[i].memoryAddress();
                arrayAddresses[i] = arrays[i].memoryAddress();
            }
            return take.from(schemaAddresses, arrayAddresses);
        } finally {
            for (int i = 0; i < n; i++) {
                if (schemas[i] != null) {
                    schemas[i].release();
                    schemas[i].close();
                }
                if (arrays[i] != null) {
                    arrays[i].release();
                    arrays[i].close();
                }
            }
        }
    }

    /**
     * The field of the column a filter names, after checking its op and value count.
     *
     * @throws InvalidOptionException naming the valid columns or ops
     */
    static Field fieldOf(List<Field> fields, TableFilter f) {
        if (!TableFilter.OPS.contains(f.op())) {
            throw new InvalidOptionException("invalid filter op \"" + f.op() + "\" for column \"" + f.column()
                    + "\": one of ==, !=, <, <=, >, >=, in, not in");
        }
        if (!f.takesList() && f.values().size() != 1) {
            throw new InvalidOptionException("invalid filter values \"" + f.values().size() + " values for \""
                    + f.column() + "\" " + f.op() + "\": one value for ==, !=, <, <=, >, >=; a list of any length"
                    + " for in and not in");
        }
        for (Field field : fields) {
            if (field.getName().equals(f.column())) {
                return field;
            }
        }
        List<String> names = new ArrayList<>();
        for (Field field : fields) {
            names.add(field.getName());
        }
        throw new InvalidOptionException("invalid filter column \"" + f.column() + "\": one of " + names);
    }

    /**
     * The filter's values as a vector of the column's value type {@code field} (the caller
     * closes it).
     *
     * @throws InvalidOptionException naming the column if a value does not convert exactly
     */
    static FieldVector filterValues(BufferAllocator allocator, Field field, TableFilter f) {
        ArrowType type = field.getType();
        if (type.isComplex() || type.getTypeID() == ArrowType.ArrowTypeID.Null) {
            throw new InvalidOptionException("invalid filter column \"" + f.column() + "\": a column of a type with"
                    + " an order (numbers, decimals, booleans, strings, binary, dates, times, timestamps, durations,"
                    + " or a dictionary of one); it is " + type);
        }
        FieldVector v = new Field(field.getName(), new FieldType(true, type, null), null).createVector(allocator);
        boolean done = false;
        try {
            int n = f.values().size();
            v.setInitialCapacity(Math.max(1, n));
            v.allocateNew();
            for (int i = 0; i < n; i++) {
                Object value = f.values().get(i);
                // A null stays null (a new vector's slots are): in an in-list it matches null rows.
                if (value != null && !set(v, type, i, value)) {
                    throw new InvalidOptionException("invalid filter value \"" + describe(value) + "\" for column \""
                            + f.column() + "\" (" + type + "): not a value of the column's type (a "
                            + expected(type) + " that converts exactly)");
                }
            }
            v.setValueCount(n);
            done = true;
            return v;
        } finally {
            if (!done) {
                v.close();
            }
        }
    }

    private static String describe(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof byte[]) {
            return "byte[" + ((byte[]) value).length + "]";
        }
        return value + " (" + value.getClass().getSimpleName() + ")";
    }

    private static String expected(ArrowType t) {
        switch (t.getTypeID()) {
            case Int:
                return "Byte, Short, Integer, Long or BigInteger";
            case FloatingPoint:
                return "Float or Double";
            case Bool:
                return "Boolean";
            case Decimal:
                return "BigDecimal or integer";
            case Date:
                return "LocalDate or java.sql.Date";
            case Time:
                return "LocalTime";
            case Timestamp:
                return ((ArrowType.Timestamp) t).getTimezone() == null ? "LocalDateTime"
                        : "Instant, java.sql.Timestamp, OffsetDateTime or ZonedDateTime";
            case Duration:
                return "java.time.Duration";
            case Utf8:
            case LargeUtf8:
                return "String";
            case Binary:
            case LargeBinary:
            case FixedSizeBinary:
                return "byte[]";
            default:
                return "value (this type cannot be filtered)";
        }
    }

    /** Sets slot {@code i} of {@code v} (of type {@code t}) to {@code value}; false if it does not convert. */
    private static boolean set(FieldVector v, ArrowType t, int i, Object value) {
        switch (t.getTypeID()) {
            case Int: {
                ArrowType.Int it = (ArrowType.Int) t;
                BigInteger b = integer(value);
                if (b == null) {
                    return false;
                }
                int bits = it.getBitWidth();
                BigInteger min = it.getIsSigned() ? BigInteger.ONE.shiftLeft(bits - 1).negate() : BigInteger.ZERO;
                BigInteger max = it.getIsSigned() ? BigInteger.ONE.shiftLeft(bits - 1).subtract(BigInteger.ONE)
                        : BigInteger.ONE.shiftLeft(bits).subtract(BigInteger.ONE);
                if (b.compareTo(min) < 0 || b.compareTo(max) > 0) {
                    return false;
                }
                long x = b.longValue(); // two's complement: an unsigned 64-bit value keeps its bits
                if (v instanceof TinyIntVector) {
                    ((TinyIntVector) v).set(i, (byte) x);
                } else if (v instanceof SmallIntVector) {
                    ((SmallIntVector) v).set(i, (short) x);
                } else if (v instanceof IntVector) {
                    ((IntVector) v).set(i, (int) x);
                } else if (v instanceof BigIntVector) {
                    ((BigIntVector) v).set(i, x);
                } else if (v instanceof UInt1Vector) {
                    ((UInt1Vector) v).set(i, (byte) x);
                } else if (v instanceof UInt2Vector) {
                    ((UInt2Vector) v).set(i, (char) x);
                } else if (v instanceof UInt4Vector) {
                    ((UInt4Vector) v).set(i, (int) x);
                } else if (v instanceof UInt8Vector) {
                    ((UInt8Vector) v).set(i, x);
                } else {
                    return false;
                }
                return true;
            }
            case FloatingPoint: {
                FloatingPointPrecision p = ((ArrowType.FloatingPoint) t).getPrecision();
                Double d = floating(value);
                if (d == null) {
                    return false;
                }
                double x = d;
                if (p == FloatingPointPrecision.DOUBLE) {
                    ((Float8Vector) v).set(i, x);
                    return true;
                }
                float f = (float) x;
                if (!Double.isNaN(x) && f != x) {
                    return false;
                }
                if (p == FloatingPointPrecision.SINGLE) {
                    ((Float4Vector) v).set(i, f);
                    return true;
                }
                short half = Float16.toFloat16(f);
                if (!Float.isNaN(f) && Float16.toFloat(half) != f) {
                    return false;
                }
                ((Float2Vector) v).set(i, half);
                return true;
            }
            case Bool:
                if (!(value instanceof Boolean)) {
                    return false;
                }
                ((BitVector) v).set(i, (Boolean) value ? 1 : 0);
                return true;
            case Decimal: {
                ArrowType.Decimal dt = (ArrowType.Decimal) t;
                if (dt.getBitWidth() != 128) {
                    return false;
                }
                BigDecimal d = decimal(value);
                if (d == null) {
                    return false;
                }
                try {
                    d = d.setScale(dt.getScale());
                } catch (ArithmeticException e) {
                    return false;
                }
                if (d.precision() > dt.getPrecision()) {
                    return false;
                }
                ((DecimalVector) v).set(i, d);
                return true;
            }
            case Date: {
                LocalDate date = value instanceof LocalDate ? (LocalDate) value
                        : value instanceof java.sql.Date ? ((java.sql.Date) value).toLocalDate() : null;
                if (date == null) {
                    return false;
                }
                long day = date.toEpochDay();
                if (v instanceof DateDayVector) {
                    if (day != (int) day) {
                        return false;
                    }
                    ((DateDayVector) v).set(i, (int) day);
                } else {
                    ((DateMilliVector) v).set(i, day * 86_400_000L);
                }
                return true;
            }
            case Time: {
                if (!(value instanceof LocalTime)) {
                    return false;
                }
                Long x = inUnit(0, ((LocalTime) value).toNanoOfDay(), ((ArrowType.Time) t).getUnit());
                if (x == null) {
                    return false;
                }
                if (v instanceof TimeSecVector) {
                    ((TimeSecVector) v).set(i, (int) (long) x);
                } else if (v instanceof TimeMilliVector) {
                    ((TimeMilliVector) v).set(i, (int) (long) x);
                } else if (v instanceof TimeMicroVector) {
                    ((TimeMicroVector) v).set(i, x);
                } else if (v instanceof TimeNanoVector) {
                    ((TimeNanoVector) v).set(i, x);
                } else {
                    return false;
                }
                return true;
            }
            case Timestamp: {
                ArrowType.Timestamp ts = (ArrowType.Timestamp) t;
                Instant instant = instant(value, ts.getTimezone() != null);
                if (instant == null) {
                    return false;
                }
                Long x = inUnit(instant.getEpochSecond(), instant.getNano(), ts.getUnit());
                if (x == null) {
                    return false;
                }
                ((TimeStampVector) v).set(i, x);
                return true;
            }
            case Duration: {
                if (!(value instanceof Duration)) {
                    return false;
                }
                Duration d = (Duration) value;
                Long x = inUnit(d.getSeconds(), d.getNano(), ((ArrowType.Duration) t).getUnit());
                if (x == null) {
                    return false;
                }
                ((DurationVector) v).set(i, x);
                return true;
            }
            case Utf8:
            case LargeUtf8: {
                if (!(value instanceof CharSequence)) {
                    return false;
                }
                byte[] b = value.toString().getBytes(StandardCharsets.UTF_8);
                if (v instanceof VarCharVector) {
                    ((VarCharVector) v).setSafe(i, b);
                } else {
                    ((LargeVarCharVector) v).setSafe(i, b);
                }
                return true;
            }
            case Binary:
            case LargeBinary:
            case FixedSizeBinary: {
                if (!(value instanceof byte[])) {
                    return false;
                }
                byte[] b = (byte[]) value;
                if (v instanceof VarBinaryVector) {
                    ((VarBinaryVector) v).setSafe(i, b);
                } else if (v instanceof LargeVarBinaryVector) {
                    ((LargeVarBinaryVector) v).setSafe(i, b);
                } else {
                    if (b.length != ((ArrowType.FixedSizeBinary) t).getByteWidth()) {
                        return false;
                    }
                    ((FixedSizeBinaryVector) v).set(i, b);
                }
                return true;
            }
            default:
                return false;
        }
    }

    /** An exact integer, or null. */
    private static BigInteger integer(Object value) {
        if (value instanceof Byte || value instanceof Short || value instanceof Integer || value instanceof Long) {
            return BigInteger.valueOf(((Number) value).longValue());
        }
        if (value instanceof BigInteger) {
            return (BigInteger) value;
        }
        if (value instanceof BigDecimal) {
            try {
                return ((BigDecimal) value).toBigIntegerExact();
            } catch (ArithmeticException e) {
                return null;
            }
        }
        return null;
    }

    /** A floating-point value (integers only if exact in a double), or null. */
    private static Double floating(Object value) {
        if (value instanceof Float || value instanceof Double) {
            return ((Number) value).doubleValue();
        }
        BigInteger b = integer(value);
        if (b != null && b.bitLength() <= 53) {
            return b.doubleValue();
        }
        return null;
    }

    /** An exact decimal, or null. */
    private static BigDecimal decimal(Object value) {
        if (value instanceof BigDecimal) {
            return (BigDecimal) value;
        }
        BigInteger b = integer(value);
        return b == null ? null : new BigDecimal(b);
    }

    /** An instant from a value for a timestamp column with a zone ({@code zoned}) or without, or null. */
    private static Instant instant(Object value, boolean zoned) {
        if (!zoned) {
            // A timestamp without a zone holds wall-clock time, stored as if it were UTC.
            return value instanceof LocalDateTime ? ((LocalDateTime) value).toInstant(ZoneOffset.UTC) : null;
        }
        if (value instanceof Instant) {
            return (Instant) value;
        }
        if (value instanceof java.sql.Timestamp) {
            return ((java.sql.Timestamp) value).toInstant();
        }
        if (value instanceof OffsetDateTime) {
            return ((OffsetDateTime) value).toInstant();
        }
        if (value instanceof ZonedDateTime) {
            return ((ZonedDateTime) value).toInstant();
        }
        return null;
    }

    /** {@code seconds} and {@code nanos} (0 to 10^9) in {@code unit}, or null if not exact or too large. */
    static Long inUnit(long seconds, long nanos, TimeUnit unit) {
        long perSecond;
        switch (unit) {
            case SECOND:
                perSecond = 1;
                break;
            case MILLISECOND:
                perSecond = 1_000;
                break;
            case MICROSECOND:
                perSecond = 1_000_000;
                break;
            default:
                perSecond = 1_000_000_000;
        }
        long nanosPerUnit = 1_000_000_000L / perSecond;
        if (nanos % nanosPerUnit != 0) {
            return null;
        }
        try {
            return Math.addExact(Math.multiplyExact(seconds, perSecond), nanos / nanosPerUnit);
        } catch (ArithmeticException e) {
            return null;
        }
    }

    /**
     * Bytes per value of a fixed-width column as {@code readInto} writes it, or -1 (booleans,
     * decimals, dictionaries and variable-width types, which it refuses).
     */
    static int fixedWidth(Field field) {
        if (field.getDictionary() != null) {
            return -1;
        }
        ArrowType t = field.getType();
        switch (t.getTypeID()) {
            case Int:
                return ((ArrowType.Int) t).getBitWidth() / 8;
            case FloatingPoint:
                switch (((ArrowType.FloatingPoint) t).getPrecision()) {
                    case HALF:
                        return 2;
                    case SINGLE:
                        return 4;
                    default:
                        return 8;
                }
            case Date:
                return t.equals(new ArrowType.Date(org.apache.arrow.vector.types.DateUnit.DAY)) ? 4 : 8;
            case Time:
                return ((ArrowType.Time) t).getBitWidth() / 8;
            case Timestamp:
            case Duration:
                return 8;
            case Bool:
                // One byte per row (0 or 1), as Spark's vectors keep booleans.
                return 1;
            default:
                return -1;
        }
    }
}
